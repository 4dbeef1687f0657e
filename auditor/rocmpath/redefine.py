"""CUDA names a project redefines for its ROCm build, on a preprocessor branch only ROCm compiles:
`#define __shfl_xor_sync(mask, var, lane) __shfl_xor(var, lane)` or `#define __stwb(dst, src) *dst = src`
under `#if defined(USE_ROCM)` (exllamav2's `compat.cuh`). The project's own shim maps every use of such a
name in its component, so a finding on that name is `shim-mapping`, not live."""
from __future__ import annotations

import re

from auditor.parsing.preproc import PreprocFacts, line_states

DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)", re.MULTILINE)
CUDA_NAME = re.compile(r"^(?:__[a-z]\w*|cuda[A-Z_]\w*|cu[A-Z]\w*|CU[A-Z_]\w*)$")
ROCM_WORD = re.compile(r"ROCM|HIP", re.IGNORECASE)


def rocm_redefinitions(text: str, facts: PreprocFacts) -> dict[str, int]:
    """CUDA-style names this file `#define`s only for a ROCm build -> the line of the first such define."""
    if "define" not in text or not ROCM_WORD.search(text):
        return {}
    candidates = [(m.group(1), m.start()) for m in DEFINE.finditer(text) if CUDA_NAME.match(m.group(1))]
    if not candidates:
        return {}
    rocm_only = line_states(text, facts).rocm_only
    out: dict[str, int] = {}
    for name, offset in candidates:
        line = text.count("\n", 0, offset) + 1
        if line in rocm_only:
            out.setdefault(name, line)
    return out


def uses(name: str, snippet: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(name)}\b", snippet) is not None
