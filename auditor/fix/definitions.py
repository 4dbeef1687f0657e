"""The definitions the C/C++ fixes use, as they are written into the project's header of them (auditor/fix/compat.py):
one text for CUDA and HIP, each behind its own guard so a header may hold them in any order."""
from __future__ import annotations

FULL_MASK = "ROCM_AUDIT_FULL_MASK"
FULL_MASK_DEFINITION = f"""\
#ifndef {FULL_MASK}  // rocm-audit fix: all lanes; on AMD the wavefront's (64, fewer in a smaller block)
#if defined(__HIP_PLATFORM_AMD__)
#define {FULL_MASK} __activemask()
#else
#define {FULL_MASK} 0xffffffffu
#endif
#endif
"""
SLEEP = "rocm_audit_nanosleep"
SLEEP_DEFINITION = f"""\
#ifndef ROCM_AUDIT_NANOSLEEP  // rocm-audit fix: HIP has no __nanosleep; s_sleep is a short back-off
#define ROCM_AUDIT_NANOSLEEP
#if defined(__HIP_PLATFORM_AMD__)
static __device__ __forceinline__ void {SLEEP}(unsigned) {{ __builtin_amdgcn_s_sleep(2); }}
#else
static __device__ __forceinline__ void {SLEEP}(unsigned ns) {{ __nanosleep(ns); }}
#endif
#endif
"""
