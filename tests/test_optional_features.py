"""What the default install can run without: a CUDA-only extension imported only where its failure is tolerated,
a module, setup flags or a flag list behind an environment opt-in that is off by default, are optional features;
an extension the package imports unconditionally stays port work."""
import pytest
from tests.conftest import write_tree

TOLERANT = ("try:\n"
            "    import mar_cuda\n"
            "except ImportError:\n"
            "    mar_cuda = None\n")
AVAILABLE = ("from q.flags import MAR_AVAILABLE\n"
             "if MAR_AVAILABLE:\n"
             "    import mar_cuda\n")
SETUP = (
    "import os\n"
    "from setuptools import setup\n"
    "from torch.utils import cpp_extension\n"
    "import torch\n"
    "ROCM_VERSION = os.environ.get('ROCM_VERSION', None)\n"
    "if ROCM_VERSION and not torch.version.hip:\n"
    "    raise SystemExit('ROCm build needs a ROCm torch')\n"
    "version = '0.1'\n"
    "if ROCM_VERSION:\n"
    "    version += f'+rocm{ROCM_VERSION}'\n"
    "extensions = [cpp_extension.CUDAExtension('q_cuda', ['ext/q.cpp', 'ext/q_kernel.cu'])]\n"
    "if not ROCM_VERSION:\n"
    "    extensions.append(cpp_extension.CUDAExtension('mar_cuda', ['ext/mar/mar.cpp', 'ext/mar/mar_kernel.cu']))\n"
    "setup(name='q', version=version, packages=['q'], ext_modules=extensions, cmdclass={'build_ext': cpp_extension.BuildExtension})\n"
)
PTX_KERNEL = ("__device__ inline int lop3(int a, int b, int c) {\n"
              "  int res;\n"
              "  asm volatile(\"lop3.b32 %0, %1, %2, %3, 0x96;\\n\" : \"=r\"(res) : \"r\"(a), \"r\"(b), \"r\"(c));\n"
              "  return res;\n"
              "}\n"
              "__global__ void k(int* x) { x[threadIdx.x] = lop3(x[0], x[1], x[2]); }\n")


def _tree(tmp_path, importers: dict[str, str]):
    return write_tree(tmp_path / "q", {
        "setup.py": SETUP,
        "q/__init__.py": "",
        "q/flags.py": "try:\n    import mar_cuda  # noqa\n    MAR_AVAILABLE = True\nexcept Exception:\n"
                      "    MAR_AVAILABLE = False\n",
        **importers,
        "ext/q.cpp": "#include <torch/extension.h>\n",
        "ext/q_kernel.cu": "__global__ void add(float* x) { x[threadIdx.x] += 1.f; }\n",
        "ext/mar/mar.cpp": "#include <torch/extension.h>\n",
        "ext/mar/mar_kernel.cu": PTX_KERNEL,
        "tests/test_mar.py": "import mar_cuda\n",   # tests are not shipped: an unguarded import there counts not
    })

KERNEL = "__global__ void k(float* x) { x[threadIdx.x] += 1.0f; }\n"


@pytest.mark.parametrize("importers", [
    {"q/marlin.py": TOLERANT},
    {"q/marlin.py": TOLERANT, "q/repack.py": AVAILABLE},
], ids=["try-except", "availability-flag"])
def test_a_cuda_only_extension_imported_only_where_failure_is_tolerated_is_an_optional_feature(
        tmp_path, run_json, importers):
    _, data = run_json(_tree(tmp_path, importers), "--no-cache")
    ptx = next(f for f in data["findings"] if f["path"] == "ext/mar/mar_kernel.cu" and f["rule"] == "RA300")
    assert ptx["disposition"] == "optional feature"
    assert "runs without `mar_cuda`: its imports tolerate a failure (q/" in ptx["disposition_note"]
    assert data["summary"]["verdict"] == "ready"



def test_a_cuda_only_extension_the_package_imports_unconditionally_stays_port_work(tmp_path, run_json):
    _, data = run_json(_tree(tmp_path, {"q/marlin.py": TOLERANT, "q/ops.py": "import mar_cuda\n"}), "--no-cache")
    ptx = next(f for f in data["findings"] if f["path"] == "ext/mar/mar_kernel.cu" and f["rule"] == "RA300")
    assert ptx["disposition"] == "live"
    assert data["summary"]["verdict"] != "ready"



def test_setup_flags_behind_an_environment_opt_in_that_is_off_by_default_are_an_optional_feature(tmp_path, run_json):
    """`profile_mode = os.environ.get("X_PROFILE", "0") == "1"`, then `if profile_mode:` adds
    `-Xptxas=-v`: a default install never runs it; the same flag outside the opt-in stays live."""
    setup = ("import os\n"
             "from setuptools import setup\n"
             "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
             "profile_mode = os.environ.get('H_PROFILE', '0') == '1'\n"
             "nvcc = ['-O3']\n"
             "if profile_mode:\n"
             "    nvcc.append('-Xptxas=-v')\n"                                   # line 7: opt-in
             "always = os.environ.get('H_FAST', '1') == '1'\n"
             "if always:\n"
             "    nvcc.append('-Xptxas=-O3')\n"                                  # line 10: on by default
             "setup(name='h', packages=['h'], ext_modules=[CUDAExtension('h._C', ['k.cu'],\n"
             "      extra_compile_args={'nvcc': nvcc})], cmdclass={'build_ext': BuildExtension})\n")
    root = write_tree(tmp_path / "h", {"setup.py": setup, "h/__init__.py": "", "k.cu": "__global__ void k() {}\n"})
    _, data = run_json(root, "--no-cache")
    flags = {f["line"]: f["disposition"] for f in data["findings"] if f["rule"] == "RA651"}
    assert flags == {7: "optional feature", 10: "live"}



def test_a_module_behind_an_environment_opt_in_that_is_off_by_default_is_an_optional_feature(tmp_path, run_json):
    """A model module JIT-builds its CUDA kernels only `if os.environ.get('RWKV_CUDA_ON') == '1':` (and under
    `if version == 5 and os.environ["RWKV_CUDA_ON"] == '1':`): the default install runs the torch path, so the
    nvcc flags there are an optional feature; the same load outside any opt-in stays live."""
    model = ("import os\n"
             "from torch.utils.cpp_extension import load\n"
             "if os.environ.get('M_CUDA_ON') == '1':\n"
             "    load(name='wkv', sources=['cuda/op.cpp', 'cuda/op.cu'],\n"
             "         extra_cuda_cflags=['--use_fast_math', '-Xptxas -O3'])\n"          # line 5: opt-in
             "def build(version):\n"
             "    if version == 5 and os.environ['M_CUDA_ON'] == '1':\n"
             "        load(name='v5', sources=['cuda/v5.cu'], extra_cuda_cflags=['-Xptxas -O3'])\n"   # line 8
             "def always():\n"
             "    load(name='x', sources=['cuda/x.cu'], extra_cuda_cflags=['-Xptxas -O3'])\n")   # line 10: live
    root = write_tree(tmp_path / "m", {
        "pyproject.toml": "[project]\nname = 'm'\nversion = '1'\ndependencies = ['torch']\n",
        "m/__init__.py": "", "m/model.py": model,
        "m/cuda/op.cpp": "", "m/cuda/op.cu": KERNEL, "m/cuda/v5.cu": KERNEL, "m/cuda/x.cu": KERNEL})
    _, data = run_json(root, "--no-cache")
    flags = {f["line"]: f["disposition"] for f in data["findings"] if f["rule"] == "RA651"}
    assert flags == {5: "optional feature", 8: "optional feature", 10: "live"}, flags



def test_flags_built_from_a_variable_that_is_empty_unless_set_are_an_optional_feature(tmp_path, run_json):
    """`gpu_arch = os.environ.get('GPU_ARCH', '').split()` fed to a helper that loops `for arch in gpu_archs:
    nvcc_args.extend(['-gencode', ...])`: no flag unless the user sets GPU_ARCH. The same loop over a constant list
    is live, and so is one over a variable whose default is not empty."""
    setup = ("import os\n"
             "from setuptools import setup\n"
             "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
             "def nvcc_args(gpu_archs):\n"
             "    args = []\n"
             "    for arch in gpu_archs:\n"
             "        args.extend(['-gencode', f'arch=compute_{arch},code=sm_{arch}'])\n"      # line 7: opt-in
             "    return args\n"
             "gpu_arch = os.environ.get('GPU_ARCH', '').split()\n"
             "flags = nvcc_args(gpu_arch)\n"
             "default_arch = os.environ.get('DEFAULT_ARCH', '80').split()\n"
             "for arch in default_arch:\n"
             "    flags.append(f'-gencode=arch=compute_{arch},code=sm_{arch}')\n"          # line 13: on by default
             "for arch in ['70', '80']:\n"
             "    flags.append(f'-gencode=arch=compute_{arch},code=sm_{arch}')\n"          # line 15: always
             "setup(name='c', packages=['c'], ext_modules=[CUDAExtension('c._C', ['k.cu'],\n"
             "      extra_compile_args={'nvcc': flags})], cmdclass={'build_ext': BuildExtension})\n")
    root = write_tree(tmp_path / "c", {"setup.py": setup, "c/__init__.py": "", "k.cu": KERNEL})
    _, data = run_json(root, "--no-cache")
    flags = {f["line"]: f["disposition"] for f in data["findings"] if f["rule"] == "RA651"}
    assert flags == {7: "optional feature", 13: "live", 15: "live"}, flags

