#pragma once

#if defined(SOLVER_COMPILING_CUDA)
#include "cuda/device_config.hpp"
#elif defined(SOLVER_COMPILING_HIP)
#include "hip/device_config.hpp"
#else
#error "compile the kernels for one device"
#endif
