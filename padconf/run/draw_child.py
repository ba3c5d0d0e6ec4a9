"""The child side of drawing spec versions side by side (``padconf.run.drawing.build_cases``).

Started isolated (``padconf.execution.children``), so it imports nothing from the working
directory and needs no fork of padconf (whose progress thread may hold a lock). Reads one JSON
``[specs_dir, spec_id, cases, seed]`` a line on stdin and answers each with one line: the JSON
list of that spec version's cases.jsonl lines.
"""
from __future__ import annotations

from padconf.execution.children import serve
from padconf.run.drawing import draw_spec


def main() -> None:
    serve(lambda request: draw_spec(tuple(request)))


if __name__ == "__main__":
    main()
