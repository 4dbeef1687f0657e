"""A project's shuffle macro whose ROCm expansion is a legacy `__shfl*` without a width, called in a kernel:
pytorch_sparse's `utils.cuh` defines, on its ROCm branch, `#define SHFL_SYNC(mask, var, delta) __shfl(var,
delta)`, whose width defaults to the whole wavefront (64 lanes on CDNA), while `spmm_cuda.cu`'s kernels work in
32-lane rows (`lane_idx = thread_idx & (32 - 1)`): on a 64-lane wavefront the second row reads the first row's
lanes. The per-file scan sees neither (the definition is a macro body on a line written for ROCm, the use is a
call of the project's macro), so the build reader finds both; the analysis reports each use in a kernel RA203
finds 32-lane rows in (auditor/judge/analysis/wideshuffle.py)."""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from auditor.parse.preproc import line_states
from auditor.truth.cpp import PreprocFacts
from auditor.types import SourceFile

# `#define NAME(params) … __shfl(var, lane) …`: the legacy indexed shuffle with two arguments (no width) in a
# function-like macro's body (arguments without parentheses of their own, as the project's macros write them). Its
# source lane is absolute in the wavefront, so every 32-lane row past the first reads the first row. The relative
# shuffles are left to RA208's per-call judgement: `__shfl_xor` with an offset below 32 stays in its row, and a
# `__shfl_down` reduction still lands the row's sum in its lane 0.
WIDE_DEFINITION = re.compile(
    r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)\([^()\n]*\)[^\n]*?\b__shfl[ \t]*"
    r"\([^(),\n]+,[^(),\n]+\)", re.MULTILINE)
KERNEL = re.compile(r"\b__global__\b")
BRACE = re.compile(r"[{}]")
MAX_KERNEL_CHARS = 200_000


@dataclass(frozen=True, slots=True)
class WideShuffleUse:
    """A call of a wide shuffle macro inside a kernel that never reads warpSize."""

    path: str
    line: int
    macro: str
    snippet: str
    kernel: tuple[int, int]     # the kernel's first and last lines
    definition: str             # path:line of the macro's ROCm definition
    definition_text: str        # that line


def wide_shuffle_macros(c_files: Sequence[SourceFile], text_of: Callable[[str], str],
                        facts: PreprocFacts) -> dict[str, tuple[str, str]]:
    """Macro -> (path:line, its text) of the first definition a ROCm build compiles whose body is a width-less
    legacy shuffle."""
    found: dict[str, tuple[str, str]] = {}
    for f in c_files:
        text = text_of(f.path)
        if "__shfl" not in text or "#" not in text:
            continue
        matches = list(WIDE_DEFINITION.finditer(text))
        if not matches:
            continue
        states = line_states(text, facts)
        for m in matches:
            line = text.count("\n", 0, m.start()) + 1
            if line not in states.excluded and line not in states.dead:
                found.setdefault(m.group(1), (f"{f.path}:{line}", m.group(0).strip()[:200]))
    return found


def wide_shuffle_uses(c_files: Sequence[SourceFile], text_of: Callable[[str], str],
                      macros: dict[str, tuple[str, str]]) -> dict[str, tuple[WideShuffleUse, ...]]:
    """Path -> the calls of these macros inside `__global__` kernels whose text never names warpSize."""
    if not macros:
        return {}
    call = re.compile(r"\b(" + "|".join(re.escape(m) for m in sorted(macros)) + r")[ \t]*\(")
    out: dict[str, tuple[WideShuffleUse, ...]] = {}
    for f in c_files:
        text = text_of(f.path)
        if "__global__" not in text or not call.search(text):
            continue
        uses: list[WideShuffleUse] = []
        line_at = _LineCounter(text)   # kernels and their calls come in order: lines counted once, not per call
        for start, end in _kernels(text):
            body = text[start:end]
            if "warpSize" in body:
                continue
            first = line_at(start)
            calls = [(m, line_at(m.start())) for m in call.finditer(text, start, end)]
            last = line_at(end)
            snippets: dict[int, str] = {}   # by line: one line's many calls find its ends once
            for m, line in calls:
                if line not in snippets:
                    stop = text.find("\n", m.start())
                    snippets[line] = text[text.rfind("\n", 0, m.start()) + 1:stop if stop != -1 else len(text)]
                uses.append(WideShuffleUse(f.path, line, m.group(1), snippets[line].strip()[:200], (first, last),
                                           *macros[m.group(1)]))
        if uses:
            out[f.path] = tuple(uses)
    return out


class _LineCounter:
    """The line of each offset asked for, offsets asked in increasing order."""

    def __init__(self, text: str) -> None:
        self.text, self.offset, self.line = text, 0, 1

    def __call__(self, offset: int) -> int:
        if offset < self.offset:   # (asked out of order: counted from the start)
            self.offset, self.line = 0, 1
        self.line += self.text.count("\n", self.offset, offset)
        self.offset = offset
        return self.line


def _kernels(text: str):
    """(start, end) offsets of each `__global__` function's text, from the keyword to its closing brace (braces
    in comments and strings are counted too: a bound, not a parse; an unbalanced body ends the search). Kernels
    do not nest, so the search resumes after each one: every character is looked at about once."""
    resume = 0
    for m in KERNEL.finditer(text):
        if m.start() < resume:
            continue
        opening = text.find("{", m.end(), m.end() + 4000)
        if opening == -1 or ";" in text[m.end():opening]:
            continue   # a declaration
        depth = 0
        for brace in BRACE.finditer(text, opening, min(len(text), opening + MAX_KERNEL_CHARS)):
            depth += 1 if brace.group() == "{" else -1
            if depth == 0:
                resume = brace.end()
                yield m.start(), resume
                break
        else:
            return
