#include <hip/hip_runtime.h>
#include "common/config.hpp"

__global__ void spmv(const float* v, float* out) { out[threadIdx.x] = v[threadIdx.x % solver::warp_size]; }
