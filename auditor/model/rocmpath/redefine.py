"""CUDA names a project redefines for its ROCm build, on a preprocessor branch only ROCm compiles:
`#define __shfl_xor_sync(mask, var, lane) __shfl_xor(var, lane)`, `#define __stwb(dst, src) *dst = src` or
`typedef hipMemPool_t cudaMemPool_t;`
under `#if defined(USE_ROCM)` (exllamav2's `compat.cuh`), or a device function of that name
(`static __device__ int __dp4a(const int a, ...) {` in vLLM's GGUF kernels). The project's own shim maps every
use of such a name in its component, so a finding on that name is `shim-mapping`, not live."""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from auditor.parse.preproc import DEFINED_MACRO, line_states
from auditor.truth.cpp import PreprocFacts
from auditor.model.rocmpath.model import RocmPath, RocmPattern

# after `__device__` on a line that holds no call, `=` or `;` before it: the name of the function declared there
DECLARATION_CHARS = 400
DEVICE_FUNCTION = re.compile(r"\b__device__\b[^;(=\n]*?\b([A-Za-z_]\w*+)[ \t]*\(")
# `typedef hipStream_t cudaStream_t;` and `using cudaStream_t = hipStream_t;`: a CUDA type the project maps itself
TYPE_ALIAS = re.compile(r"^[ \t]*(?:typedef\b[^;{}\n]*?\b([A-Za-z_]\w*)[ \t]*;|using[ \t]+([A-Za-z_]\w*)[ \t]*=)",
                        re.MULTILINE)
CUDA_NAME = re.compile(r"^(?:__[a-z]\w*|cuda[A-Z_]\w*|cu[A-Z]\w*|CU[A-Z_]\w*)$")
ROCM_WORDS = ("rocm", "hip")   # looked for in the lower-cased text: ten times faster than a case-blind regex
CUDA_VERSION_MACROS = ("CUDART_VERSION", "CUDA_VERSION")


def rocm_redefinitions(text: str, facts: PreprocFacts, shim: bool = False) -> dict[str, int]:
    """CUDA-style names this file `#define`s or defines as device functions only for a ROCm build -> the line of the
    first such definition. In a `shim` (a header only the HIP build includes, like ggml's `vendors/hip.h`) every
    definition a ROCm build compiles counts, not only those on a ROCm-only branch."""
    if not shim:
        lowered = text.lower()
        if not any(word in lowered for word in ROCM_WORDS):
            return {}
    # any name a ROCm-only branch #defines to something (`#define atomicAdd_block atomicAdd`): the judge maps a
    # CUDA-shaped one on every line that uses it, another only where it is the finding's subject
    # (auditor/model/project.py); a bare `#define GUARD_H_` maps nothing, and skipping it spares the branch reading
    candidates = [(m.group(1), m.start(), shim) for m in DEFINED_MACRO.finditer(text)
                  if CUDA_NAME.match(m.group(1)) or _has_replacement(text, m.end())]
    candidates += [(name, m.start(), shim) for m in TYPE_ALIAS.finditer(text)
                   if (name := m.group(1) or m.group(2)) and CUDA_NAME.match(name)]
    # a device function the project defines where ROCm compiles it is the project's own (ggml's `__hgt2_mask` under
    # `#if CUDART_VERSION < 12000 || defined(GGML_USE_HIP)`): no CUDA toolkit would accept a second definition
    candidates += [(name, offset, True) for name, offset in _device_functions(text) if CUDA_NAME.match(name)]
    if not candidates:
        return {}
    states = line_states(text, facts)
    rocm_only = states.rocm_only
    out: dict[str, int] = {}
    line, counted = 1, 0
    for name, offset, compiled_counts in sorted(candidates, key=lambda c: c[1]):   # lines counted once, not per name
        line += text.count("\n", counted, offset)
        counted = offset
        if line in rocm_only or (compiled_counts and line not in states.excluded and line not in states.dead):
            out.setdefault(name, line)
    return out


def _has_replacement(text: str, after_name: int) -> bool:
    """The #define whose name ends at `after_name` gives it a replacement (after any parameter list)."""
    end = text.find("\n", after_name)
    rest = text[after_name:end if end != -1 else len(text)]
    if rest.startswith("("):
        rest = rest[rest.find(")") + 1:] if ")" in rest else ""
    return bool(rest.strip())


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


def undefined_in_shims(paths: Iterable[RocmPath], shims: Mapping[str, str]) -> frozenset[str]:
    """A HIP build that compiles the CUDA sources through shim headers (`shims`: path -> text; ggml's
    `vendors/hip.h`), with no HIPIFY step (which turns `CUDART_VERSION` into `HIP_VERSION`): the CUDA version macros
    no shim defines are undefined there, so `#if CUDART_VERSION >= 12000` is a CUDA-only branch."""
    patterns = {e.pattern for path in paths if path.verified for e in path.evidence}
    if not shims or RocmPattern.HIP_SHIM not in patterns or RocmPattern.BUILD_TIME_HIPIFY in patterns:
        return frozenset()
    defined = {m.group(1) for text in shims.values() for m in DEFINED_MACRO.finditer(text)}
    return frozenset(name for name in CUDA_VERSION_MACROS if name not in defined)
