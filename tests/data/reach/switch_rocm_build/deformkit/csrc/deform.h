#pragma once
#include <torch/extension.h>

#ifdef WITH_CUDA
at::Tensor deform_cuda_forward(const at::Tensor& value, const at::Tensor& offsets);
#endif

inline at::Tensor deform_forward(const at::Tensor& value, const at::Tensor& offsets) {
  if (value.is_cuda()) {
#ifdef WITH_CUDA
    return deform_cuda_forward(value, offsets);
#else
    AT_ERROR("Not compiled with GPU support");
#endif
  }
  AT_ERROR("Not implemented on the CPU");
}
