"""Small values derived from a file's text, kept per process under the text's digest (never the text): `history`
reads the same build scripts and headers at every point, and derives the same facts from them."""
from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")
MAX_ENTRIES = 8192          # values, each small (a few line numbers or names)

_kept: OrderedDict[tuple[str, bytes], object] = OrderedDict()


def by_text(kind: str, text: str, make: Callable[[], T]) -> T:
    """`make()`, a pure function of `text` named `kind`, made once per text (the least recently used goes first)."""
    key = (kind, hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest())
    if key in _kept:
        _kept.move_to_end(key)
        return _kept[key]  # type: ignore[return-value]
    value = make()
    _kept[key] = value
    if len(_kept) > MAX_ENTRIES:
        _kept.popitem(last=False)
    return value
