"""The cross-language link (RA909, auditor/match/xlang): Python calls of extension ops whose C++ implementation uses a
CUDA-only library, on a tree shaped like TransformerEngine's and apex's extensions (a pybind11 frontend that
binds thin wrappers, the library code in another translation unit or a header, TORCH_LIBRARY ops)."""
import pytest

from auditor.run.pipeline import audit
from auditor.match.rulebook import load_rulebook
from auditor.match.xlang.builds import declared_extensions
from auditor.match.xlang.exports import exports
from tests.conftest import write_tree

SETUP = """\
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name="fusedte",
    packages=["fusedte"],
    ext_modules=[
        CUDAExtension(
            name="fusedte_torch",
            sources=["csrc/extensions/pybind.cpp", "csrc/extensions/attention.cpp", "csrc/fused_attn.cu",
                     "csrc/layernorm.cu"],
        ),
        CUDAExtension(name="fusedte.gemm_ops", sources=["csrc/gemm/ops.cpp", "csrc/gemm/gemm.cu"]),
    ],
    cmdclass={"build_ext": BuildExtension},
)
"""
PYBIND = """\
#include <torch/extension.h>
#include "../common.h"

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("fused_attn_fwd", &transformer::fused_attn_fwd, "Fused attention forward",
        py::call_guard<py::gil_scoped_release>());
  m.def("layernorm_fwd", &layernorm_fwd, "LayerNorm forward");
  py::class_<Workspace>(m, "Workspace")
      .def("fused_attn_fwd", &Workspace::run);
}
"""
ATTENTION = """\
#include "common.h"

namespace transformer {
std::vector<at::Tensor> fused_attn_fwd(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  return {fused_attn_fwd_cuda(q, k, v)};
}
}  // namespace transformer
"""
COMMON = """\
#pragma once
#include <torch/extension.h>
at::Tensor fused_attn_fwd_cuda(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v);
at::Tensor layernorm_fwd(const at::Tensor& x);
"""
FUSED_ATTN = """\
#include <cudnn.h>
#include "common.h"

at::Tensor fused_attn_fwd_cuda(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  cudnnHandle_t handle;
  cudnnCreate(&handle);
  return q;
}
"""
LAYERNORM = """\
#include "common.h"

__global__ void ln_kernel(float* x) { x[threadIdx.x] *= 2.0f; }

at::Tensor layernorm_fwd(const at::Tensor& x) { return x; }
"""
GEMM_OPS = """\
#include <torch/library.h>

TORCH_LIBRARY(fusedte, m) {
  m.def("gemm(Tensor a, Tensor b) -> Tensor");
}
"""
GEMM = """\
#include <cublasLt.h>
#include <torch/library.h>

at::Tensor gemm_cuda(const at::Tensor& a, const at::Tensor& b) {
  cublasLtHandle_t handle;
  cublasLtCreate(&handle);
  return a;
}

TORCH_LIBRARY_IMPL(fusedte, CUDA, m) {
  m.impl("gemm", &gemm_cuda);
}
"""
ATTENTION_PY = """\
import torch

import fusedte_torch as tex


def attention(q, k, v):
    return tex.fused_attn_fwd(q, k, v)[0]


def attention_dispatched(q, k, v):
    if torch.version.hip:
        return torch.nn.functional.scaled_dot_product_attention(q, k, v)
    return tex.fused_attn_fwd(q, k, v)[0]


def layernorm(x):
    return tex.layernorm_fwd(x)
"""
GEMM_PY = """\
import torch


def gemm(a, b):
    return torch.ops.fusedte.gemm.default(a, b)
"""
TREE = {
    "setup.py": SETUP,
    "csrc/extensions/pybind.cpp": PYBIND,
    "csrc/extensions/attention.cpp": ATTENTION,
    "csrc/common.h": COMMON,
    "csrc/fused_attn.cu": FUSED_ATTN,
    "csrc/layernorm.cu": LAYERNORM,
    "csrc/gemm/ops.cpp": GEMM_OPS,
    "csrc/gemm/gemm.cu": GEMM,
    "fusedte/__init__.py": "",
    "fusedte/attention.py": ATTENTION_PY,
    "fusedte/gemm.py": GEMM_PY,
}


def _linked(tree: dict[str, str], tmp_path):
    report = audit([write_tree(tmp_path, tree)], load_rulebook(), shown_root="repo")
    return {(f.path, f.span.line): f for f in report.findings if f.rule_id == "RA909"}


@pytest.fixture(scope="module")
def linked(tmp_path_factory):
    return _linked(TREE, tmp_path_factory.mktemp("fusedte"))


def test_a_call_of_an_op_bound_to_a_wrapper_names_the_op_and_the_library_behind_it(linked):
    call = linked[("fusedte/attention.py", 7)]
    assert call.detail.startswith("calls op fused_attn_fwd, implemented with cudnn (RA400 at csrc/fused_attn.cu:")
    assert "in csrc/fused_attn.cu" in call.detail
    assert "registered at csrc/extensions/pybind.cpp:5" in call.detail
    assert call.severity.label == "medium" and call.would_break()


def test_a_torch_ops_call_reaches_the_implementation_registered_by_torch_library_impl(linked):
    call = linked[("fusedte/gemm.py", 5)]
    assert call.detail.startswith("calls op gemm, implemented with cublaslt (RA402 at csrc/gemm/gemm.cu:")
    assert call.would_break()


def test_the_projects_own_rocm_dispatch_guards_the_call(linked):
    call = linked[("fusedte/attention.py", 13)]
    assert call.guarded and not call.would_break() and call.severity.label == "info"


def test_an_op_with_no_library_behind_it_and_a_class_method_are_not_reported(linked):
    assert sorted(k for k in linked if k[0].endswith(".py")) == [
        ("fusedte/attention.py", 7), ("fusedte/attention.py", 13), ("fusedte/gemm.py", 5)]


def test_the_registration_of_such_an_op_is_reported_at_low_unless_a_rocm_build_never_compiles_it(linked, tmp_path):
    registration = linked[("csrc/extensions/pybind.cpp", 5)]
    assert registration.detail.startswith("registers op fused_attn_fwd, implemented with cudnn (RA400 at "
                                           "csrc/fused_attn.cu:")
    assert registration.severity.label == "low" and registration.would_break()
    assert "m.def(\"fused_attn_fwd\"" in registration.snippet
    assert sorted(k for k in linked if not k[0].endswith(".py")) == [
        ("csrc/extensions/pybind.cpp", 5), ("csrc/gemm/gemm.cu", 11)]   # layernorm_fwd: no library behind it
    fenced = PYBIND.replace('  m.def("fused_attn_fwd"', '#ifndef USE_ROCM\n  m.def("fused_attn_fwd"').replace(
        "py::call_guard<py::gil_scoped_release>());\n", "py::call_guard<py::gil_scoped_release>());\n#endif\n", 1)
    found = _linked({**TREE, "csrc/extensions/pybind.cpp": fenced}, tmp_path)
    assert not [k for k in found if k[0] == "csrc/extensions/pybind.cpp"]
    assert ("fusedte/attention.py", 7) in found   # the op is missing on ROCm: the call still needs a route


def test_library_code_the_rocm_build_never_compiles_makes_no_call_site(tmp_path):
    guarded = FUSED_ATTN.replace("#include <cudnn.h>\n", "#ifndef USE_ROCM\n#include <cudnn.h>\n#endif\n").replace(
        "  cudnnHandle_t handle;\n  cudnnCreate(&handle);\n",
        "#ifndef USE_ROCM\n  cudnnHandle_t handle;\n  cudnnCreate(&handle);\n#endif\n")
    found = _linked({**TREE, "csrc/fused_attn.cu": guarded}, tmp_path)
    assert ("fusedte/attention.py", 7) not in found and ("fusedte/gemm.py", 5) in found


def test_registrations_are_read_from_pybind11_and_torch_library_blocks():
    assert exports(PYBIND) == (("", "fused_attn_fwd", "fused_attn_fwd", 5), ("", "layernorm_fwd", "layernorm_fwd", 7))
    assert exports(GEMM_OPS) == (("torch.ops.fusedte", "gemm", "", 4),)
    assert exports(GEMM) == (("torch.ops.fusedte", "gemm", "gemm_cuda", 11),)
    assert exports('PYBIND11_MODULE(_C, m) { m.def("f", py::overload_cast<int>(&ns::f)); }') == (("_C", "f", "f", 1),)
    assert exports("int main() { m.def(\"x\", &y); }") == ()


def test_the_build_script_names_each_extension_and_its_sources():
    names = [(e.name, e.sources[0]) for e in declared_extensions(SETUP)]
    assert names == [("fusedte_torch", "csrc/extensions/pybind.cpp"), ("fusedte.gemm_ops", "csrc/gemm/ops.cpp")]


CORE_TREE = {
    **TREE,
    # the extension's wrapper calls the C API of the project's core library, a separate distribution whose
    # cuDNN code sits in another of its units, two calls further (TransformerEngine's `nvte_fused_attn_fwd`)
    "csrc/extensions/attention.cpp": ATTENTION.replace("fused_attn_fwd_cuda(q, k, v)", "nvte_fused_attn_fwd(q, k, v)"),
    "core/setup.py": "from setuptools import setup\nsetup(name='fusedte-core')\n",
    "core/fused_attn.cpp": ('#include "attn_cudnn.h"\n'
                            "at::Tensor nvte_fused_attn_fwd(const at::Tensor& q, const at::Tensor& k, "
                            "const at::Tensor& v) {\n  return attn_cudnn_fwd(q, k, v, 0);\n}\n"),
    "core/attn_cudnn.h": "#pragma once\nat::Tensor attn_cudnn_fwd(const at::Tensor&, const at::Tensor&, "
                         "const at::Tensor&, int);\n",
    "core/attn_cudnn.cu": ('#include <cudnn.h>\n#include "attn_cudnn.h"\n'
                           "at::Tensor attn_cudnn_fwd(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,"
                           " int depth) {\n"
                           "  if (depth > 1) return attn_cudnn_fwd(q, k, v, depth - 1);   // a cycle: not followed\n"
                           "  cudnnHandle_t handle;\n  cudnnCreate(&handle);\n  return q;\n}\n"),
    # a one-word pybind11 module the package installs under itself (`from fusedte import fusedte_jax`)
    "csrc/jax/pybind.cpp": ('#include "../../core/attn_cudnn.h"\n'
                            "int backend() { return attn_cudnn_fwd(at::Tensor(), at::Tensor(), at::Tensor(), 0)"
                            ".dim(); }\n"
                            "PYBIND11_MODULE(fusedte_jax, m) {\n  m.def(\"get_backend\", &backend);\n}\n"),
    "fusedte/jax.py": "from fusedte import fusedte_jax\n\n\ndef backend():\n    return fusedte_jax.get_backend()\n",
}


def test_a_call_is_followed_into_the_core_librarys_other_units_and_reported_with_the_chain(tmp_path):
    found = _linked(CORE_TREE, tmp_path)
    call = found[("fusedte/attention.py", 7)]
    assert "implemented with cudnn (RA400 at core/attn_cudnn.cu:" in call.detail
    assert "through fused_attn_fwd -> nvte_fused_attn_fwd -> attn_cudnn_fwd" in call.detail
    # the core library is a separate distribution: the call is reported, as optional as the code behind it
    assert call.disposition == "optional" and "core/attn_cudnn.cu:6" in call.disposition_note
    jax = found[("fusedte/jax.py", 5)]
    assert jax.detail.startswith("calls op get_backend, implemented with cudnn") and "through backend -> " \
        "attn_cudnn_fwd" in jax.detail
