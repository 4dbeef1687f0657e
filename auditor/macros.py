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
    return project_macros(sources, facts, max_bytes)[0]


def project_macros(
    sources: Iterable[SourceFile], facts: PreprocFacts, max_bytes: int,
) -> tuple[frozenset[str], dict[str, int]]:
    """(macros defined only on CUDA-only branches, values derived on ROCm: `#if defined(__HIP_PLATFORM_AMD__)
    / #define BNB_HIP 1` makes `#if BNB_HIP` true on ROCm in every file)."""
    verdict: dict[str, bool] = {}
    values: dict[str, set[int]] = {}
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
            states = line_states(text, facts)
        except (RecursionError, ValueError):  # too deep, or a #define of over 4300 digits: the scan reports it
            continue
        for name, cuda_only in states.defines:
            verdict[name] = verdict.get(name, True) and cuda_only
        for name, value in states.rocm_values:
            values.setdefault(name, set()).add(value)
    derived = {name: next(iter(found)) for name, found in values.items() if len(found) == 1}
    return frozenset(name for name, cuda_only in verdict.items() if cuda_only and name not in derived), derived
