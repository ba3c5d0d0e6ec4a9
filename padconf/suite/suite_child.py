"""The child side of drawing the fixed suite's spec versions side by side
(``padconf.suite.fixed.suite_cases``): started isolated (``padconf.execution.children``), it
answers each JSON request with that version's entries (``fixed.spec_cases_json``)."""
from __future__ import annotations

from padconf.execution.children import serve
from padconf.suite.fixed import spec_cases_json


def main() -> None:
    serve(spec_cases_json)


if __name__ == "__main__":
    main()
