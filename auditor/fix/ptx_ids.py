"""The ids nvcc gives internal-linkage names in PTX, replaced whole so that two compiles of the same code compare
equal. nvcc 13 names an anonymous namespace `_GLOBAL__N__<id>` and the scope of a `static` entity `_INTERNAL_<id>`,
the id being `<hash of the compile directory>_<n>_<file name, n characters>_<tail>`, where the tail is the first
external function's mangled name, a hash, or a hash and nvcc's process id (in a unit that defines no external
non-template function: its kernels are all templates). The process id differs from one compile to the next, and
its digits run into the length of the next name (`..._28651` `3ops`), so an id is read to the length its mangled
name gives it (`_ZN42_INTERNAL_...`): the digits before it."""
from __future__ import annotations

import re

_ID_START = re.compile(rb"(?:_GLOBAL__N__|_INTERNAL_)[0-9a-f]{8}_(\d+)_")
_TAIL = re.compile(rb"(?:_[0-9a-f]{8}(?:_\d+)?|_?_Z\w*|_?)\Z")
_HEAD = re.compile(rb"(?:_GLOBAL__N__|_INTERNAL_)[0-9a-f]{8}_")
_REPLACEMENT = b"_INTERNAL_ID_"


def normalise_internal_ids(ptx: bytes) -> bytes:
    """`ptx` with every internal-linkage id, and the length digits before it, replaced by one token; an id
    outside a mangled name (no length before it that fits) loses its directory hash only."""
    parts: list[bytes] = []
    done = 0
    for found in _ID_START.finditer(ptx):
        start = found.start()
        if start < done:
            continue
        span = _mangled_span(ptx, start, found.end() + int(found.group(1)))
        if span is None:
            continue
        parts += [ptx[done:span[0]], _REPLACEMENT]
        done = span[1]
    parts.append(ptx[done:])
    return _HEAD.sub(_REPLACEMENT, b"".join(parts))


def _mangled_span(ptx: bytes, start: int, file_end: int) -> tuple[int, int] | None:
    """(where the length digits before the id at `start` begin, where the id ends), for the shortest length
    that reaches past the file name and leaves a tail of one of nvcc's forms; None when no length fits."""
    digits = start
    while digits > 0 and ptx[digits - 1:digits].isdigit():
        digits -= 1
    for first in range(start - 1, digits - 1, -1):   # the shortest length first: an earlier digit is another name's
        end = start + int(ptx[first:start])
        if end >= file_end and end <= len(ptx) and _TAIL.match(ptx[file_end:end]):
            return first, end
    return None
