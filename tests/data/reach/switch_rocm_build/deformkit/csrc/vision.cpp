#include "deform.h"

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("deform_forward", &deform_forward, "deformable sampling");
}
