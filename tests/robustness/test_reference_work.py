"""padconf's reference bounds the work a case implies, not only its output: the output and each
axis's index maps together (``padconf.spec.reference.MAX_WORK_BYTES``); beyond it a case is
too large to check, in one allocation-free step (docs/reliability.md)."""
from __future__ import annotations

import resource
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from padconf.spec.reference import MAX_ELEMENTS, TooLargeToCheck, pad


@pytest.mark.parametrize("mode", ["reflect", "edge", "wrap", "constant"])
def test_an_output_just_under_the_element_bound_is_refused_by_its_work(mode):
    """A 1-D output just under 2**27 elements built int64 index arrays of 1 GiB each: a
    MemoryError, exit 3."""
    with pytest.raises(TooLargeToCheck, match="index maps"):
        pad([1.0, 2.0, 3.0], [0, MAX_ELEMENTS - 4], mode)


def test_an_empty_output_with_a_huge_axis_is_refused_before_its_index_maps():
    """[0, 2**40]: no element in the output, but each axis's plan builds its index positions."""
    with pytest.raises(TooLargeToCheck, match="index maps"):
        pad(np.zeros((0, 0), np.float32), [0, 0, 0, 2**40], "constant")


def test_the_work_bound_holds_under_a_memory_cap():
    code = textwrap.dedent(f"""
        import resource
        resource.setrlimit(resource.RLIMIT_AS, ({3 << 30}, {3 << 30}))
        from padconf.cases.case import Case
        from padconf.cases.classify import classify
        from padconf.spec.loader import get_spec
        import numpy as np
        for mode in ("reflect", "edge", "wrap"):
            case = classify(Case(spec="onnx/Pad-19", data=np.ones(3, np.float32), pads=[0, {MAX_ELEMENTS - 4}],
                                 mode=mode), get_spec("onnx/Pad-19"))
            print(case.kind)
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["too-large-to-check"] * 3
    assert resource  # the cap is set in the child
