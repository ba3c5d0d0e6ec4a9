"""What the adapters of ahead-of-time compilers share (IREE, TVM): builds kept in the persistent compile cache
(padconf.adapters.compile_cache), the cache's key read in the zygote, a note when the cache is
off, and refusals that say the compiler lacks a lowering read from its error text."""
from __future__ import annotations

import re

from padconf.adapters import Adapter, error_text
from padconf.adapters.compile_cache import CompileCache, default_root


class CompilingAdapter(Adapter):
    compiles_ahead = True
    # error texts that say the compiler has no lowering for an op, a type or a pattern: text is
    # all there is, as a compile error comes back from a subprocess or from the cache as text
    not_implemented: re.Pattern[str] | None = None
    rebuilds = "compiles"  # what it does again with the cache off, as its note says
    lacks_strings: str | None = None  # why it cannot hold string tensors, where it cannot

    def __init__(self) -> None:
        super().__init__()
        self._cache = CompileCache(default_root())

    def usable(self) -> str | None:
        """None when the compiler's target can be used here (after available()'s imports), else a
        one-line reason."""
        return None

    def available(self) -> str | None:
        why = super().available() or self.usable()
        if why is None:
            self._cache.why_off()  # reads the cache's key here, in the zygote: its workers inherit it
        return why

    def notes(self) -> list[str]:
        why = self._cache.why_off()
        return [f"{self.rebuilds} everything again: {why}"] if why and self._cache.root is not None else []

    def lacks_kernel(self, exc: Exception) -> bool:
        return bool(self.not_implemented and self.not_implemented.search(error_text(exc)))

    def supports(self, spec_id: str, dtype: str) -> str | None:
        if dtype == "string" and self.lacks_strings:
            return self.lacks_strings
        return super().supports(spec_id, dtype)
