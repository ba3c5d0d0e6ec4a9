"""The child side of drawing spec versions side by side (``padconf.runner.build_cases``).

Started as ``python -I`` (``padconf.worker_process.isolated``), so it imports nothing from the
working directory and needs no fork of padconf (whose progress thread may hold a lock). Reads a
JSON list of ``[specs_dir, spec_id, cases, seed]`` on stdin and writes, per item and in order,
one line: the JSON list of that spec version's cases.jsonl lines.
"""
from __future__ import annotations

import json
import sys


def main() -> None:
    from .runner import draw_spec

    for item in json.loads(sys.stdin.read()):
        sys.stdout.write(json.dumps(draw_spec(tuple(item))) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
