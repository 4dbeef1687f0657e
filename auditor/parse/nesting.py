"""How deep a build file's conditional blocks (`if()`/`endif()`, `ifeq`/`endif`, `#if`/`#endif`) are followed.

Real build files nest a handful of levels; a file nested deeper than this is not read further (the reader marks
it partial), so a check over the open blocks on every line costs a bounded time however the file is made."""
from __future__ import annotations

MAX_NESTING = 64


def too_deep() -> str:
    return f"conditional blocks nested over {MAX_NESTING} levels deep: not read past that point"
