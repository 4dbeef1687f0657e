#pragma once
#if defined(__HIP_PLATFORM_AMD__)
#include <hip/hip_runtime.h>
#define atomicAdd_block atomicAdd
#define WARP_LANES 64
#else
#define WARP_LANES 32
#endif
