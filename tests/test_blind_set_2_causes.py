"""The general causes behind the second blind set's misses (issue 25), each on a small tree built from what a real
project does: a nested ops package the root's requirements install by path is on the main path; a compiler flag
on the ROCm branch of a CUDAExtension build is a ROCm build; a flag list read only in the CUDA branch is guarded;
32-lane ids in a kernel with no warp-level operation only split work; `-lineinfo` reaches clang harmlessly."""
from tests.conftest import write_tree

KERNEL = "__global__ void k(float* x) { x[threadIdx.x] *= 2.f; }\n"
OPS_SETUP = (
    "from setuptools import setup\n"
    "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
    "setup(name='ops', ext_modules=[CUDAExtension('ops._ext', ['ops/k.cu'],\n"
    "      extra_compile_args={'cxx': ['-O3'], 'nvcc': ['-O3', '-Xfatbin', '-compress-all']})],\n"
    "      cmdclass={'build_ext': BuildExtension})\n"
)


def _finding(report: dict, path: str, rule: str) -> dict | None:
    return next((f for f in report["findings"] if f["path"] == path and f["rule"] == rule), None)


def test_a_nested_ops_package_the_root_requirements_install_by_path_is_on_the_main_path(tmp_path, run_json):
    """Pointnet2_PyTorch: the root package is pure Python and requirements.txt installs `./ops_lib/.`."""
    files = {
        "setup.py": "from setuptools import setup\nsetup(name='models', packages=['models'])\n",
        "models/__init__.py": "import ops\n",
        "ops_lib/setup.py": OPS_SETUP,
        "ops_lib/ops/k.cu": KERNEL,
    }
    root = write_tree(tmp_path / "repo", {**files, "requirements.txt": "numpy\n./ops_lib/.\n"})
    _, report = run_json(root, "--fail-on", "never")
    kinds = {c["path"]: c["kind"] for c in report["components"]}
    assert kinds == {".": "primary", "ops_lib": "primary"}
    assert report["summary"]["verdict"] == "needs-port"
    flag = _finding(report, "ops_lib/setup.py", "RA651")
    assert flag is not None and flag["line"] == 4 and flag["disposition"] == "live"

    # must not match: a requirement on a published package, or a path outside the components, changes nothing
    other = write_tree(tmp_path / "other", {**files, "requirements.txt": "numpy\nops-lib>=1\n./vendor/thing\n"})
    _, report = run_json(other, "--fail-on", "never")
    assert {c["path"]: c["kind"] for c in report["components"]} == {".": "primary", "ops_lib": "secondary"}
    assert report["summary"]["verdict"] == "ready"


FUSED_SSIM_SETUP = """import torch
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

def configure_cuda():
    fallback_archs = [
        "-gencode=arch=compute_80,code=sm_80",
    ]
    args = {"cxx": ["-O3"], "nvcc": ["-O3"]}
    if torch.version.hip:
        args["nvcc"].append("-ffast-math")
    else:
        args["nvcc"].extend(("--maxrregcount=32", "--use_fast_math"))
        args["nvcc"].extend(fallback_archs)
    return CUDAExtension, args

extension_type, compiler_args = configure_cuda()
setup(name="fused_ssim", ext_modules=[extension_type(name="fused_ssim_cuda", sources=["ssim.cu", "ext.cpp"],
      extra_compile_args=compiler_args)], cmdclass={"build_ext": BuildExtension})
"""

SSIM_KERNEL = """__global__ void load_tile(const float* img, float* out, int width) {
  __shared__ float tile[24][40];
  int tid = threadIdx.y * blockDim.x + threadIdx.x;
  int warp_id = tid / 32;
  int lane_id = tid % 32;
  int num_warps = (blockDim.x * blockDim.y + 31) / 32;
  for (int row = warp_id; row < 24; row += num_warps)
    for (int col = lane_id; col < 40; col += 32) tile[row][col] = img[row * width + col];
  __syncthreads();
  out[tid] = tile[tid / 40 % 24][tid % 40];
}

__global__ void reduce_rows(const float* in, float* out) {
  int lane = threadIdx.x % 32;
  float v = in[blockIdx.x * blockDim.x + threadIdx.x];
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffff, v, offset);
  if (lane == 0) out[blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32] = v;
}
"""


def test_a_flag_on_the_rocm_branch_of_a_cuda_extension_is_a_rocm_build(tmp_path, run_json):
    """fused-ssim: `if torch.version.hip:` adds `-ffast-math`; the nvcc-only flags and the fallback arch list
    (read only in the else) are the CUDA alternative; its copy kernel's `tid / 32` only splits a loop."""
    root = write_tree(tmp_path / "repo", {"setup.py": FUSED_SSIM_SETUP, "ssim.cu": SSIM_KERNEL,
                                          "ext.cpp": "// bindings\n"})
    _, report = run_json(root, "--fail-on", "never")
    assert report["summary"]["verdict"] == "ready"
    assert "`-ffast-math` at setup.py:11" in report["summary"]["verdict_reason"]
    archs = _finding(report, "setup.py", "RA651")
    assert archs is not None and archs["line"] == 7 and archs["guarded"]
    lanes = {f["line"]: f for f in report["findings"] if f["rule"] == "RA203"}
    assert sorted(lanes) == [14, 17]   # the shuffle kernel's lane and warp ids, not the copy kernel's


def test_a_flag_list_also_read_outside_the_cuda_branch_stays_live(tmp_path, run_json):
    root = write_tree(tmp_path / "repo", {
        "setup.py": FUSED_SSIM_SETUP.replace("    return CUDAExtension, args",
                                             "    print(fallback_archs)\n    return CUDAExtension, args"),
        "ssim.cu": KERNEL, "ext.cpp": "// bindings\n",
    })
    _, report = run_json(root, "--fail-on", "never")
    archs = _finding(report, "setup.py", "RA651")
    assert archs is not None and archs["line"] == 7 and not archs["guarded"]


def test_lineinfo_is_not_an_nvcc_only_flag_but_its_long_form_is(tmp_path, run_json):
    setup = ("from setuptools import setup\nfrom torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
             "flags = ['-lineinfo', '-O3']\nlong_flags = ['--generate-line-info']\n"
             "setup(name='x', ext_modules=[CUDAExtension('x._C', ['k.cu'],\n"
             "      extra_compile_args={'nvcc': flags + long_flags})], cmdclass={'build_ext': BuildExtension})\n")
    root = write_tree(tmp_path / "repo", {"setup.py": setup, "k.cu": KERNEL})
    _, report = run_json(root, "--fail-on", "never")
    assert [(f["line"], f["subject"]) for f in report["findings"] if f["rule"] == "RA651"] == \
        [(4, "--generate-line-info")]
