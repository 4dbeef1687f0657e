"""A pre-pass over the C/C++ sources: macros the repository defines only on CUDA-only branches.

`#if __CUDA_ARCH__ >= 800 / #define PTX_AVAILABLE` in one header makes `#ifdef PTX_AVAILABLE` in
another a CUDA-only branch too; a per-file view cannot see that.
"""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from auditor.parsing.preproc import PreprocFacts, line_states
from auditor.types import SourceFile

C_KINDS = ("cuda", "cpp")


def cuda_only_macros(sources: Iterable[SourceFile], facts: PreprocFacts, max_bytes: int) -> frozenset[str]:
    verdict: dict[str, bool] = {}
    for source in sources:
        if source.kind not in C_KINDS:
            continue
        try:
            path = Path(source.abspath)
            if path.stat().st_size > max_bytes:
                continue
            text = path.read_bytes().decode("utf-8", "replace")
        except OSError:
            continue  # the scan itself reports unreadable files
        if "#define" not in text and "# define" not in text:
            continue
        try:
            defines = line_states(text, facts).defines
        except Exception:  # a file this pass cannot read is still scanned, and reported, on its own
            continue
        for name, cuda_only in defines:
            verdict[name] = verdict.get(name, True) and cuda_only
    return frozenset(name for name, cuda_only in verdict.items() if cuda_only)
