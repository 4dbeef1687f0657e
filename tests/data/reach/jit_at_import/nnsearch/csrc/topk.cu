#include <cuda_runtime.h>
__global__ void topk(float* x) {
  float v = x[threadIdx.x];
  asm volatile("add.f32 %0, %0, 1.0;" : "+f"(v));
  x[threadIdx.x] = v;
}
