#include <vector>
#if !defined(FOO_USE_CUDA)
inline void AssertGPUSupport() { throw 1; }
#endif
#if defined(FOO_USE_CUDA) || defined(FOO_USE_HIP)
void gpu_sum(std::vector<float>&);
#endif
