#ifndef LIB_GPU_HPP_
#define LIB_GPU_HPP_

#include "device.hpp"

#if defined(LIB_DEVICE_HIP)
#include <hip/hip_runtime.h>
#define cudaGetDevice(...) hipGetDevice(__VA_ARGS__)
#else
#include <cuda.h>
#include <cuda_runtime.h>
#endif

#if !defined(LIB_DEVICE_HIP)
#include <linux/version.h>
#define NVLS_API_AVAILABLE ((CUDART_VERSION >= 12030) && (LINUX_VERSION_CODE >= KERNEL_VERSION(5, 6, 0)))
#else
#define NVLS_API_AVAILABLE 0
#endif

#endif
