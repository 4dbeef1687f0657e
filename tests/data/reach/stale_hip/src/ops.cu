#include <cstdint>
#if defined(__HIP_PLATFORM_HCC__)
#include <hip/hip_runtime.h>
constexpr int kWarp = 64;
#else
#include <cuda_runtime.h>
constexpr int kWarp = 32;
#endif

__global__ void scale(float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}
