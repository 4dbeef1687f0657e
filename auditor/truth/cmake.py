"""CMake `if()` tests read on a ROCm build, two ways, both fed by rules/guards.toml:

- `cmake_truth`: three-valued (true, false, unknown) on ROCm, for the text rules' reading of a build file
  (auditor/parse/buildblocks.py), from [build]: only positive ROCm tests are read.
- `configuration`: which build an arm is for (rocm, cuda, another vendor's, or unknown), for the build reader
  (auditor/model/rocmpath/cmakebuild.py), from [cmake], with the variables the file's own ROCm arms set.
"""
from __future__ import annotations

import re

from auditor.truth.cpp import Tri
from auditor.truth.switches import BuildTests, CMakeSwitches, shipped

ROCM, CUDA, OTHER, BOTH = "rocm", "cuda", "other-backend", "both"
NEGATION = re.compile(r"^\s*NOT\s+", re.IGNORECASE)
AND_OR = re.compile(r"\b(?:AND|OR)\b")
OR_WORD = re.compile(r"\bOR\b", re.IGNORECASE)
STREQUAL_WORD = re.compile(r"\bSTREQUAL\b")
WORD = re.compile(r"\w+")
MAX_CONDITION_CHARS = 4096    # an if() test longer than this is not a backend switch: unknown, not searched
_STREQUAL = re.compile(r'^\s*(?:\$\{)?(\w+)\}?\s+STREQUAL\s+"?([^"\s]*)"?\s*$', re.IGNORECASE)


def cmake_truth(condition: str, tests: BuildTests) -> Tri:
    """True or false on ROCm for a positive ROCm test (`USE_ROCM`, `NOT USE_ROCM`, `BACKEND STREQUAL "hip"`), else
    unknown (an AND/OR, a CUDA test, a comparison with another value)."""
    condition = condition.strip()
    if AND_OR.search(condition):
        return None
    negated = bool(NEGATION.match(condition))
    core = NEGATION.sub("", condition)
    if not re.search(tests.rocm_condition, core):
        return None
    if STREQUAL_WORD.search(core) and not re.search(tests.rocm_value, core):
        return None
    return not negated


def configuration(text: str, rocm_vars: dict[str, str], shared: frozenset[str] | set[str] = frozenset(),
                  switches: CMakeSwitches | None = None) -> str | None:
    """rocm, cuda, other-backend, or None (unknown) for the ROCm configuration. `rocm_vars`: variables a ROCm branch
    sets, with the value set there; `shared`: those other branches set to a true value too (no ROCm marker by name,
    though their value still tells `STREQUAL` tests apart)."""
    if len(text) > MAX_CONDITION_CHARS:
        return None
    s = switches or shipped().cmake
    negated = NEGATION.match(text) is not None
    core = NEGATION.sub("", text, count=1)
    if OR_WORD.search(core):
        return None
    words = set(WORD.findall(core))
    compared = _STREQUAL.match(core)
    if compared and rocm_vars.get(compared.group(1)):
        # `VLLM_GPU_LANG STREQUAL "CUDA"` where a ROCm branch sets it to "HIP": the value decides, not the name
        wanted = compared.group(2).upper()
        quoted = f'"{wanted}"'
        result = ROCM if wanted == rocm_vars[compared.group(1)] else CUDA if s.cuda_option.search(quoted) \
            else OTHER if s.other_backend.search(quoted) else None
        if result is None:
            return None
    elif s.rocm_option.search(core) or any(word in rocm_vars and word not in shared for word in words):
        result = ROCM
    elif s.other_backend.search(core):
        result = OTHER
    elif s.cuda_option.search(core):
        result = CUDA
    else:
        return None
    if negated:
        return {ROCM: CUDA, CUDA: None, OTHER: None}[result]
    return result


def option_switch(condition: str, switches: CMakeSwitches | None = None) -> str:
    """What a ROCm user passes to take a ROCm test: `-DGGML_HIP=ON` from `GGML_HIP`, `-DBACKEND=hip` from
    `BACKEND STREQUAL "hip"`."""
    m = (switches or shipped().cmake).rocm_compare.search(condition)
    if m:
        return f"-D{m.group(1).lstrip('$').strip('{}')}={m.group(2)}"
    m = re.fullmatch(r"\s*\$?\{?(\w+)\}?\s*", condition)
    return f"-D{m.group(1)}=ON" if m and not m.group(1).endswith("_FOUND") else ""


def rocm_option_name(name: str, args: str, switches: CMakeSwitches | None = None) -> bool:
    """`option(GGML_HIP "..." OFF)`: a ROCm backend option left off by default."""
    return bool((switches or shipped().cmake).rocm_option_name.fullmatch(name)) and not re.search(r"\bON\s*$", args)


def builds_for_hip(code: str, switches: CMakeSwitches | None = None) -> bool:
    return bool((switches or shipped().cmake).hip_evidence.search(code))


def hip_language(args: str, switches: CMakeSwitches | None = None) -> bool:
    """`project(x LANGUAGES CXX HIP)`."""
    return bool((switches or shipped().cmake).hip_language.search(args))


def compiles_cuda(code: str, switches: CMakeSwitches | None = None) -> bool:
    return bool((switches or shipped().cmake).cuda_compile.search(code))


def evidence_rank(text: str, switches: CMakeSwitches | None = None) -> int:
    """0 for the strongest HIP evidence (`enable_language(HIP)`), 9 for evidence no rank names."""
    for rank, pattern in enumerate((switches or shipped().cmake).hip_evidence_ranks):
        if pattern.search(text):
            return rank
    return 9
