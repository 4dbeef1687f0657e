"""Edits at offsets, and what fixing one file produced. Shared by the three fixers."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Generic, TypeVar

from auditor.types import Finding

T = TypeVar("T", str, bytes)


@dataclass(frozen=True, slots=True)
class Edit(Generic[T]):
    """Replace data[start:end] with `text` (offsets in the unit the fixer works in: bytes or characters)."""

    start: int
    end: int
    text: T
    finding: Finding | None = None   # the finding it fixes; None for an addition such as a macro definition


@dataclass(frozen=True, slots=True)
class FixContext:
    """What the fixers know about the project beyond the file: the warp functions its own HIP shim redefines
    (name -> where), the functions called from lane-limited code anywhere, the oldest Python its users run
    (from requires-python), and the headers only tensor-core code includes."""

    shims: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    # function -> where a call to it is lane-limited
    lane_limited: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    # the same, counting only limits that do not keep one 32-lane group (`if (warp_id == 0)` does)
    lane_limited_beyond_group: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    python: tuple[int, int] = (3, 8)
    # header -> the tensor-core files that include it, where no other file of the project does
    tensor_core_only: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    # path -> (line, what) of the Hopper/Blackwell-only code in it: a function holding one is ported by rewriting
    unportable: Mapping[str, tuple[tuple[int, str], ...]] = field(default_factory=lambda: MappingProxyType({}))
    # rule id -> the regex of the strings a Python rule reports (the flags a fix guards on the finding's line)
    string_patterns: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    # the header the fixer's definitions live in, relative to the root (auditor/fix/compat.py); None: in each file
    compat_header: str | None = None
    # a named mask defined in a header -> None when every other file's use of it is a full-warp use, else where
    # one is not (auditor/fix/named_uses.py)
    named_elsewhere: Mapping[str, str | None] = field(default_factory=lambda: MappingProxyType({}))
    # header -> the project files that include it (`--verify` compiles a header through one of them)
    includers: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))
    # the include paths the project's build files name, relative to the root (auditor/fix/include_paths.py)
    include_dirs: tuple[str, ...] = ()
    # integer names the project's sources define with one value (`#define WARP_SIZE 32` in a common header)
    constants: Mapping[bytes, int] = field(default_factory=lambda: MappingProxyType({}))


NO_CONTEXT = FixContext()


@dataclass(frozen=True, slots=True)
class FileFix:
    """One file's fixes: its new text, the findings fixed, and those left with the reason."""

    text: str
    applied: tuple[Finding, ...] = ()
    skipped: tuple[tuple[Finding, str], ...] = ()
    defines: tuple[str, ...] = ()   # the fixer's definitions its edits use (ROCM_AUDIT_FULL_MASK, ...)


def apply_edits(data: T, edits: Sequence[Edit[T]]) -> tuple[T, list[Edit[T]], list[Edit[T]]]:
    """(new data, edits applied, edits dropped because they overlap an earlier one)."""
    kept: list[Edit[T]] = []
    dropped: list[Edit[T]] = []
    same: list[Edit[T]] = []      # the same change as a kept edit, for another finding at that place: made once
    for edit in sorted(edits, key=lambda e: (e.start, e.end)):
        if kept and (edit.start, edit.end, edit.text) == (kept[-1].start, kept[-1].end, kept[-1].text) \
                and edit.start < edit.end:
            same.append(edit)
        elif kept and edit.start < kept[-1].end and not (edit.start == edit.end == kept[-1].start):
            dropped.append(edit)
        else:
            kept.append(edit)
    out = data
    for edit in reversed(kept):
        out = out[:edit.start] + edit.text + out[edit.end:]
    return out, kept + same, dropped


def line_starts(data: T) -> list[int]:
    """Offset of each line's first unit (index 0 = line 1)."""
    newline = b"\n" if isinstance(data, bytes) else "\n"
    starts = [0]
    index = data.find(newline)
    while index != -1:
        starts.append(index + 1)
        index = data.find(newline, index + 1)
    return starts
