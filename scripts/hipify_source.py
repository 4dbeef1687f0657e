"""HIPIFY's own word on each name, laid over the API table (scripts/build_api_table.py --hipify-perl ...).

Sources, each recorded with its version in the table's header:
  hipify-perl   bin/hipify-perl of a ROCm/HIPIFY checkout (read, never run): its default (HIP) substitutions and
                its -roc substitutions (rocBLAS, rocSPARSE, MIOpen ...), its unsupported lists
  hipify-docs   docs/tables/*.md of the same checkout: the version of HIP (or of the ROC library) that added
                each HIP name, the `since` column
  hip-headers   a HIP include directory (ROCm/clr's hipamd/include): device functions HIP declares under the
                CUDA name, which HIPIFY leaves as they are (the bf16 conversions of amd_hip_bf16.h); bf16
                conversions the base table already has under the same name (HIP 7.1 headers, PyTorch's
                mapping) keep that status where hipify-perl 6.3 lists them as unsupported

A name counts as converted when either HIPIFY target maps it to a ROCm API that exists: the default target,
unless it is the retired hipDNN wrapper (legacy cuDNN), else the -roc target (MIOpen for cuDNN, including the
backend API). NEWER_DOCS carries what HIPIFY's tables say after the hipify-perl read here: the FP8 types and
conversions (HIP 6.2's FNUZ types) and the *_sync warp functions (HIP 6.2).
"""
from __future__ import annotations

import re
from pathlib import Path

from auditor.match.hipify.apitable import ApiEntry, ApiTable
from auditor.match.hipify.perl import KIND_OF_CATEGORY, HipifyMaps, target_library

# https://github.com/ROCm/HIPIFY/blob/0244dd397c19aa722fcd540db9d77f3953844f99/docs/tables/CUDA_Device_API_supported_by_HIP.md
# (newer than the hipify-perl read): CUDA name -> (HIP name, HIP version that added it).
NEWER_DOCS_SOURCE = ("ROCm/HIPIFY@0244dd39 docs/tables/CUDA_Device_API_supported_by_HIP.md "
                     "(bf16 and FP8 types, FP8 conversions, *_sync warp functions)")
NEWER_DOCS = {
    "__NV_E4M3": ("__HIP_E4M3_FNUZ", "6.2.0"), "__NV_E5M2": ("__HIP_E5M2_FNUZ", "6.2.0"),
    "__NV_NOSAT": ("__HIP_NOSAT", "6.2.0"), "__NV_SATFINITE": ("__HIP_SATFINITE", "6.2.0"),
    "__nv_bfloat16": ("__hip_bfloat16", "5.7.0"), "__nv_bfloat162": ("__hip_bfloat162", "5.7.0"),
    "__nv_bfloat16_raw": ("__hip_bfloat16_raw", "6.2.0"), "__nv_bfloat162_raw": ("__hip_bfloat162_raw", "6.2.0"),
    "__nv_fp8_e4m3": ("__hip_fp8_e4m3_fnuz", "6.2.0"), "__nv_fp8_e5m2": ("__hip_fp8_e5m2_fnuz", "6.2.0"),
    "__nv_fp8_interpretation_t": ("__hip_fp8_interpretation_t", "6.2.0"),
    "__nv_fp8_storage_t": ("__hip_fp8_storage_t", "6.2.0"),
    "__nv_fp8x2_e4m3": ("__hip_fp8x2_e4m3_fnuz", "6.2.0"), "__nv_fp8x2_e5m2": ("__hip_fp8x2_e5m2_fnuz", "6.2.0"),
    "__nv_fp8x2_storage_t": ("__hip_fp8x2_storage_t", "6.2.0"),
    "__nv_fp8x4_e4m3": ("__hip_fp8x4_e4m3_fnuz", "6.2.0"), "__nv_fp8x4_e5m2": ("__hip_fp8x4_e5m2_fnuz", "6.2.0"),
    "__nv_fp8x4_storage_t": ("__hip_fp8x4_storage_t", "6.2.0"), "__nv_saturation_t": ("__hip_saturation_t", "6.2.0"),
    **{f"__nv_cvt_{tail}": (f"__hip_cvt_{tail}", "6.2.0") for tail in (
        "bfloat16raw2_to_fp8x2", "bfloat16raw_to_fp8", "double2_to_fp8x2", "double_to_fp8", "float2_to_fp8x2",
        "float_to_fp8", "fp8_to_halfraw", "fp8x2_to_halfraw2", "halfraw2_to_fp8x2", "halfraw_to_fp8")},
    **{name: (name, "6.2.0") for name in (
        "__activemask", "__all_sync", "__any_sync", "__ballot_sync", "__match_all_sync", "__match_any_sync",
        "__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync")},
}
# Names HIPIFY knows that the table takes in (a project's own names and C math functions are left out).
# `nv_bfloat162` is cuda_bf16.h's public typedef of __nv_bfloat162; HIP declares no such name.
API_NAME = re.compile(r"^(?:cuda[A-Z]\w*|cu[A-Z]\w*|CU[A-Za-z_]\w*|cudnn\w+|CUDNN_\w+|cublas\w+|CUBLAS\w*|cusparse\w+"
                      r"|CUSPARSE\w*|curand\w+|CURAND\w*|cufft\w+|CUFFT\w*|cusolver\w+|CUSOLVER\w*|nvrtc\w+|NVRTC\w*"
                      r"|nvtx\w+|__nv_\w+|nv_bfloat16\w*|__NV_\w+|__[a-z]\w*_sync|atomic[A-Z]\w*|cub)$")
LIBRARY_API = (("cublaslt", "blaslt"), ("cublas", "blas"), ("cudnn", "cudnn"), ("cusparse", "sparse"),
               ("curand", "rand"), ("cufft", "fft"), ("cusolver", "solver"), ("nvrtc", "rtc"), ("nvtx", "nvtx"),
               ("cub", "cub"))
DOC_ROW = re.compile(r"^\|`([^`]+)`\|")
HEADER_NAME = re.compile(r"\b(__[a-z][a-z0-9_]*bfloat16[a-z0-9_]*|__bfloat16[a-z0-9_]*)\s*\(")


def docs_versions(tables: Path) -> dict[tuple[str, str], str]:
    """(CUDA name, ROCm name) -> the version that added the ROCm name, from HIPIFY's docs tables."""
    found: dict[tuple[str, str], str] = {}
    for path in sorted(tables.glob("*.md")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if not DOC_ROW.match(line):
                continue
            cells = line.strip("|").split("|")
            for i, cell in enumerate(cells[1:], 1):
                if cell.startswith("`") and i + 1 < len(cells) and cells[i + 1].strip():
                    found.setdefault((cells[0].strip("`"), cell.strip("`")), cells[i + 1].strip())
    return found


def header_device_names(include: Path) -> set[str]:
    """bf16 device functions a HIP include directory declares (amd_hip_bf16.h)."""
    names: set[str] = set()
    for path in include.rglob("*bf16*.h"):
        names |= set(HEADER_NAME.findall(path.read_text(encoding="utf-8", errors="replace")))
    return names


def _api_of(name: str, category: str) -> str:
    lowered = name.lower()
    for prefix, api in LIBRARY_API:
        if lowered.startswith(prefix):
            return api
    if category.startswith("device") or name.startswith("__") or name.startswith("atomic"):
        return "device"
    return "driver" if re.match(r"^(?:cu[A-Z]|CU[A-Za-z_])", name) else "runtime"


def overlay(base: ApiTable, maps: HipifyMaps, versions: dict[tuple[str, str], str],
            hip_device: set[str]) -> list[ApiEntry]:
    names = set(base.entries) | {n for n in (*maps.default, *maps.roc, *maps.unsupported) if API_NAME.match(n)}
    out = []
    for name in sorted(names):
        known = base.get(name)
        category = (maps.default.get(name) or maps.roc.get(name) or ("", ""))[1]
        kind = known.kind if known else KIND_OF_CATEGORY.get(category, "type" if name.startswith("nv_") else "function")
        api = known.api if known else _api_of(name, category)
        torch = known.torch if known else ""
        mapped = maps.converted(name)
        if name in NEWER_DOCS:
            hip, since = NEWER_DOCS[name]
            out.append(ApiEntry(name, hip, maps.lifecycle.get(name, "supported"), kind, api, torch, "HIP", since))
        elif mapped:
            hip, target = mapped
            since = versions.get((name, hip), "")
            out.append(ApiEntry(name, hip, maps.lifecycle.get(name, "supported"), kind, api, torch, target, since))
        elif name in hip_device:      # HIP declares it under the CUDA name; HIPIFY leaves it as it is
            out.append(ApiEntry(name, name, "supported", kind, api, torch, "HIP", ""))
        elif known is not None and known.converted and known.hip == name and "bfloat16" in name:
            # a bf16 conversion hipify-perl 6.3 calls unsupported, which the base sources (HIP 7.1 headers,
            # PyTorch's mapping of cuda_bf16.h) have under the same name
            out.append(ApiEntry(name, name, known.status, kind, api, torch, "HIP", known.since))
        elif name in maps.default or name in maps.unsupported or name in maps.roc:
            out.append(ApiEntry(name, "", "unsupported", kind, api, torch, "", ""))
        elif known is not None:       # HIPIFY does not know it: the other sources' word stands
            target = target_library(known.hip) if known.converted else ""
            out.append(ApiEntry(name, known.hip, known.status, kind, api, torch, target, known.since))
    return out
