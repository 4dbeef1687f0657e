// Test-only stand-in for ROCm 7's warp *_sync functions on Debian's HIP 5.2, which predates them. Like ROCm's
// amd_warp_sync_functions.h, it rejects a lane mask that is not 64-bit, which is what RA200's fix is about.
#pragma once
#include <hip/hip_runtime.h>

#define ROCM_AUDIT_TEST_CHECK_MASK(M) static_assert(sizeof(M) == 8, "The mask must be a 64-bit integer.")

template <typename M, typename T> __device__ T __shfl_sync(M mask, T v, int lane, int width = warpSize) {
  ROCM_AUDIT_TEST_CHECK_MASK(M); return __shfl(v, lane, width);
}
template <typename M, typename T> __device__ T __shfl_xor_sync(M mask, T v, int lane, int width = warpSize) {
  ROCM_AUDIT_TEST_CHECK_MASK(M); return __shfl_xor(v, lane, width);
}
template <typename M, typename T> __device__ T __shfl_down_sync(M mask, T v, unsigned d, int width = warpSize) {
  ROCM_AUDIT_TEST_CHECK_MASK(M); return __shfl_down(v, d, width);
}
template <typename M> __device__ unsigned long long __ballot_sync(M mask, int p) {
  ROCM_AUDIT_TEST_CHECK_MASK(M); return __ballot(p);
}
// ROCm 7's amd_warp_functions.h: "__activemask() always returns the exact active mask".
__device__ inline unsigned long long __activemask() { return __ballot(1); }
