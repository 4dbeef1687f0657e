#include "gpu.hpp"

inline size_t granularity(size_t bytes) {
  int dev;
  cudaGetDevice(&dev);
#if (NVLS_API_AVAILABLE)
  CUmulticastGranularity_flags flag = CU_MULTICAST_GRANULARITY_RECOMMENDED;
  return bytes + (size_t)flag;
#else
  return bytes;
#endif
}
