"""CUDA names a project redefines for its ROCm build, on a preprocessor branch only ROCm compiles:
`#define __shfl_xor_sync(mask, var, lane) __shfl_xor(var, lane)` or `#define __stwb(dst, src) *dst = src`
under `#if defined(USE_ROCM)` (exllamav2's `compat.cuh`), or a device function of that name
(`static __device__ int __dp4a(const int a, ...) {` in vLLM's GGUF kernels). The project's own shim maps every
use of such a name in its component, so a finding on that name is `shim-mapping`, not live."""
from __future__ import annotations

import re

from auditor.parsing.preproc import DEFINED_MACRO, PreprocFacts, line_states

# after `__device__` on a line that holds no call, `=` or `;` before it: the name of the function declared there
DECLARATION_CHARS = 400
DEVICE_FUNCTION = re.compile(r"\b__device__\b[^;(=\n]*?\b([A-Za-z_]\w*+)[ \t]*\(")
CUDA_NAME = re.compile(r"^(?:__[a-z]\w*|cuda[A-Z_]\w*|cu[A-Z]\w*|CU[A-Z_]\w*)$")
ROCM_WORD = re.compile(r"ROCM|HIP", re.IGNORECASE)


def rocm_redefinitions(text: str, facts: PreprocFacts) -> dict[str, int]:
    """CUDA-style names this file `#define`s or defines as device functions only for a ROCm build -> the line of the
    first such definition."""
    if not ROCM_WORD.search(text):
        return {}
    candidates = [(m.group(1), m.start()) for m in DEFINED_MACRO.finditer(text) if CUDA_NAME.match(m.group(1))]
    candidates += [(name, offset) for name, offset in _device_functions(text) if CUDA_NAME.match(name)]
    if not candidates:
        return {}
    rocm_only = line_states(text, facts).rocm_only
    out: dict[str, int] = {}
    line, counted = 1, 0
    for name, offset in sorted(candidates, key=lambda c: c[1]):   # lines counted once over the text, not per name
        line += text.count("\n", counted, offset)
        counted = offset
        if line in rocm_only:
            out.setdefault(name, line)
    return out


def _device_functions(text: str):
    """(name, offset) of each device function declared in the text."""
    at = text.find("__device__")
    while at != -1:
        before = text[max(0, at - DECLARATION_CHARS):at]   # (bounded: a minified line must not cost its square)
        if not any(ch in before[before.rfind("\n") + 1:] for ch in "#;(="):
            declaration = text[at:at + DECLARATION_CHARS]
            m = DEVICE_FUNCTION.match(declaration) if "(" in declaration else None
            if m:
                yield m.group(1), at
        at = text.find("__device__", at + 10)


def uses(name: str, snippet: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(name)}\b", snippet) is not None
