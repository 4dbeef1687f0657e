#ifndef LIB_DEVICE_HPP_
#define LIB_DEVICE_HPP_

#if defined(__HIP_PLATFORM_AMD__)
#include <hip/hip_runtime.h>
#endif

#if (defined(__NVCC__) || defined(__HIP_PLATFORM_AMD__))
#define LIB_DEVICE_COMPILE
#if defined(__HIP_PLATFORM_AMD__)
#define LIB_DEVICE_HIP
#else
#define LIB_DEVICE_CUDA
#endif
#else
#define LIB_HOST_COMPILE
#endif

#endif
