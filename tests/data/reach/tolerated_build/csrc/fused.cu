#include <cuda_runtime.h>
__global__ void k(float* x) {
  unsigned lane;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  x[threadIdx.x] = lane;
}
