#include "interop.h"

__global__ void histogram(const int* bins, int* counts, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd_block(&counts[bins[i]], 1);
  int lane = threadIdx.x % WARP_LANES;
  counts[n + lane] += __shfl_down_sync(0xffffffff, lane, WARP_LANES / 2);
}
