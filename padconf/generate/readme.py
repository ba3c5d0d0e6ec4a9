"""The README.md padconf generate writes beside the test data: what the suite holds (its cases by
family and kind, which dtypes of each mode hold a defined case) and how to run it with onnx's
backend runner, OpenVINO's script or padconf."""
from __future__ import annotations

from collections import Counter, defaultdict

from padconf.cases.case import CaseKind
from padconf.spec.loader import Spec
from padconf.suite.fixed import CONTEXT_DIRS, SuiteCase


def coverage(entries: list[SuiteCase], specs: list[Spec]) -> dict[str, dict[str, tuple[int, int]]]:
    """spec id -> mode -> (dtypes with a defined case, dtypes allowed)."""
    have = {(e.case.spec, e.case.mode, e.case.dtype) for e in entries
            if e.case.kind == CaseKind.DEFINED and not e.case.context}
    return {s.id: {m: (sum((s.id, m, d) in have for d in s.dtypes), len(s.dtypes)) for m in s.modes} for s in specs}


def readme(entries: list[SuiteCase], specs: list[Spec], seed: int, per_combo: int) -> str:
    cov = coverage(entries, specs)
    kinds = Counter((e.domain, e.case.kind) for e in entries if not e.case.context)
    contexts = Counter(e.kind_dir for e in entries if e.case.context)
    lines = ["# generated/: padconf's Pad conformance suite as test data", "",
             f"Written by `padconf generate --seed {seed} --per-combo {per_combo}`"
             + (f" for {', '.join(s.id for s in specs)}" if len(specs) < 12 else "")
             + "; do not edit: regenerate. The same padconf, spec files and seed write the same bytes "
             "(`tests/generate/test_writer.py` fails when this directory is stale).", "",
             "Every expected output comes from padconf's reference (`padconf/spec/reference.py`, "
             "through `padconf/cases/classify.py`), judged against the spec files in `padconf/spec/documents/`; "
             "none comes from a runtime.",
             "",
             "| directory | what | cases |", "|---|---|---:|",
             "| `onnx/` | defined cases: `model.onnx`, `test_data_set_0/input_<i>.pb`, `output_0.pb` "
             f"(onnx's node-test layout) | {kinds['onnx', CaseKind.DEFINED]} |",
             "| `onnx-invalid/` | must-reject cases: model, inputs, `expect.json` "
             f"(the rule broken, quoting the spec) | {kinds['onnx', CaseKind.MUST_REJECT]} |",
             "| `onnx-ambiguous/` | ambiguous cases: model, inputs, `output_<interpretation>.pb` per interpretation, "
             f"`expect.json` | {kinds['onnx', CaseKind.AMBIGUOUS]} |",
             "| `openvino/` | OpenVINO Pad-1 / Pad-12 defined cases: IR `model.xml` + `model.bin`, "
             f"`input_<i>.npy`, `output_0.npy` | {kinds['openvino', CaseKind.DEFINED]} |",
             "| `openvino-invalid/` | OpenVINO must-reject cases, `expect.json` | "
             f"{kinds['openvino', CaseKind.MUST_REJECT]} |",
             "| `openvino-ambiguous/` | OpenVINO ambiguous cases, `output_<interpretation>.npy`, "
             f"`expect.json` | {kinds['openvino', CaseKind.AMBIGUOUS]} |",
             "| `onnx-context[-invalid|-ambiguous]/` | Pad in its neighbourhood: a consumer after it (Conv, "
             "MaxPool, AveragePool, a second Pad, Slice, SpaceToDepth, DepthToSpace) or two, a producer of its "
             "pads (Constant nodes, their value_ints, a Shape chain, PyTorch's F.pad chain), a static or symbolic "
             "shape, the mode attribute written or not; laid out as the three above; MANIFEST.yaml's "
             "`context_cases` say each one's context; `padconf run --cases` leaves them out | "
             f"{' / '.join(str(contexts[d]) for d in CONTEXT_DIRS.values())} |",
             "", "An ambiguous case's `expect.json` maps each interpretation (`ambiguity=interpretation`, several "
             "joined by commas when the case hits more than one undefined point) to its output file, or to `null` "
             "where that interpretation rejects the case; a runtime conforms if it matches any of them.",
             "", "`MANIFEST.yaml` lists every case: directory, spec id, mode, dtype, kind, placement of "
             "pads / constant value / axes (`inputs`: fed at run time; `initializers`: baked into the "
             "model; `attributes`: Pad-1/2), edge-class tags, and the rule or ambiguity.", "",
             "Names: `test_<op><version>_<mode>_<dtype>_<what>_<n>`, `op` `pad` (ONNX) or `ovpad` "
             "(OpenVINO); `what` is the worked example (`ex_...`), the rule broken, the ambiguity hit, or "
             "the edge classes (`crop` negative pads, `mixed` mixed-sign pads, `beyond` mirror/wrap pads "
             "beyond the dimension, `empty` a zero-size dim, `scalar` rank 0, `nan`, `negzero`, "
             "`subnormal`, `emptystr`, `unicode`, `longstr`, `axes` ...); `basic` is the small case that "
             "covers its (version, mode, dtype) combination.", ""]
    for domain, title in (("onnx", "ONNX"), ("openvino", "OpenVINO")):
        rows = [s for s in specs if s.domain == domain]
        if not rows:
            continue
        modes = sorted({m for s in rows for m in s.modes},
                       key=["constant", "reflect", "edge", "wrap", "symmetric"].index)
        lines += [f"## Coverage: {title} (dtypes with a defined case / dtypes allowed)", "",
                  "| version | " + " | ".join(modes) + " | total |", "|---|" + "---:|" * (len(modes) + 1)]
        got = allowed = 0
        for s in rows:
            cells = []
            for m in modes:
                if m in cov[s.id]:
                    g, a = cov[s.id][m]
                    got, allowed = got + g, allowed + a
                    cells.append(f"{g}/{a}")
                else:
                    cells.append("-")
            total = [cov[s.id][m] for m in cov[s.id]]
            lines.append(f"| {s.id} | " + " | ".join(cells)
                         + f" | {sum(g for g, _ in total)}/{sum(a for _, a in total)} |")
        lines += ["", f"**{got}/{allowed} {title}** (version x mode x dtype) combinations have a defined case.", ""]
    lines += ["## Placements (defined cases per version)", "",
              "How pads / constant value / axes reach the model: `inputs` (graph inputs fed from "
              "`input_<i>.pb`), `initializers` (baked in), `attributes` (Pad-1/2). A case whose "
              "initializer model onnx's own checker refuses is fed instead: int32 `axes` initializers "
              "(onnx's shape inference: \"ParseData type mismatch for tensor: axes\") and repeated axes "
              "(\"Axis 0 is referred to more than once\"); `padconf run` still tries both placements.", "",
              "| version | placement | cases | with constant value | with axes |", "|---|---|---:|---:|---:|"]
    per_placement: dict[tuple, Counter] = defaultdict(Counter)
    for e in entries:
        if e.case.kind == CaseKind.DEFINED and not e.case.context:
            counts = per_placement[e.case.spec, e.placement]
            counts["cases"] += 1
            counts["value"] += e.case.constant_value is not None
            counts["axes"] += e.case.axes is not None
    for s in specs:
        for placement in ("inputs", "initializers", "attributes"):
            c = per_placement.get((s.id, placement))
            if c:
                lines.append(f"| {s.id} | {placement} | {c['cases']} | {c['value']} | {c['axes']} |")
    lines.append("")
    tag_counts: dict[str, Counter] = defaultdict(Counter)
    for e in entries:
        for t in e.case.tags:
            tag_counts[t][e.case.spec] += 1
    lines += ["## Edge classes (cases per version)", "",
              "| edge class | "
              + " | ".join(s.id.replace("onnx/", "").replace("openvino/", "ov/") for s in specs) + " |",
              "|---|" + "---:|" * len(specs)]
    for tag in sorted(tag_counts):
        lines.append(f"| {tag} | " + " | ".join(str(tag_counts[tag][s.id] or "") for s in specs) + " |")
    lines += ["", RUNNING]
    return "\n".join(lines) + "\n"


RUNNING = ("""## Running it

**onnx's backend test runner** (`onnx.backend.test.runner.Runner`), unchanged, with any backend
(here onnxruntime's). The runner's constructor collects onnx's own tests; give it this suite as
its node tests instead:

```python
import unittest
from unittest import mock
import onnx.backend.test.runner as onnx_runner
from onnx.backend.test.loader import load_model_tests
import onnxruntime.backend as backend

suite = load_model_tests(data_dir="generated", kind="onnx")
with mock.patch.object(onnx_runner, "load_model_tests", lambda kind=None, **_: suite if kind == "node" else []):
    runner = onnx_runner.Runner(backend)
result = unittest.TextTestRunner(verbosity=1).run(runner.test_suite)
raise SystemExit(0 if result.wasSuccessful() else 1)  # a CI step fails on a failing test
```

(`python -m padconf.cli run --cases generated/onnx --runtime onnxruntime` runs the same cases
through padconf, with its verdicts: bit-exact floats, where onnx's runner allows rtol 1e-3.)

**onnxruntime's `onnx_test_runner`** reads the same layout: `onnx_test_runner -e cpu generated/onnx`.
The binary is not in the `onnxruntime` pip wheel (it has no `onnx_test_runner`): it is the C++
program in onnxruntime's source tree (`onnxruntime/test/onnx/`, usage in its `README.txt`),
built with onnxruntime from source (`./build.sh --config Release` leaves it in
`build/Linux/Release/`). Point it at `generated/onnx` only: `onnx-invalid/` and
`onnx-ambiguous/` have no single `output_0.pb` on purpose (and onnx's own checker refuses many
models of `onnx-invalid/`: they break the spec).

**OpenVINO** (nothing but openvino and numpy): `python generated/openvino/run_openvino.py
generated/openvino` reads each `model.xml`, feeds `input_<i>.npy` in Parameter order and
compares the output with `output_0.npy` bit for bit (NaN equal to NaN). Tensors of the kinds
numpy lacks (bfloat16, the float8 kinds, int4 ...) are stored as their bit patterns (uint16 or
uint8); the Parameter's element type in `model.xml` says which. """
           """An omitted pad_value appears in the IR as the zero Constant named
`pad_value_default` (OpenVINO's own default).

**padconf** reads any directory in this layout back (its own or onnx's node tests) and judges
the runtimes on it: `python -m padconf.cli run --cases generated`. A directory's model gives the
spec version (ONNX: the Pad version in force at its opset; OpenVINO: the Pad op's opset) and
the inputs; padconf's reference classifies the case again. onnx's own Pad node tests are not
in the onnx wheel (no `onnx/backend/test/data/node/`); write them from the installed onnx's
case definitions and replay them:

```
padconf export-onnx-tests --out onnx-pad-tests
padconf run --cases onnx-pad-tests --runtime onnxruntime
```
""")
