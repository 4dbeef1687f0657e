"""The general causes behind the fourth blind set's misses (issue 25), each on a small tree built from what a real
project does: environment opt-ins in package modules (rwkv's RWKV_CUDA_ON) and flag lists built from a variable that
is empty unless set (Pytorch-Correlation-extension's GPU_ARCH); a torch CUDAExtension a ROCm install builds, which
ROCm PyTorch hipifies; an nvcc probe whose handled failure leaves every GPU extension out (fast-transformers); the
only GPU build behind a CUDA-only test (megablocks)."""
from tests.conftest import write_tree

KERNEL = "__global__ void k(float* x) { x[threadIdx.x] += 1.0f; }\n"


def test_a_module_behind_an_environment_opt_in_that_is_off_by_default_is_an_optional_feature(tmp_path, run_json):
    """rwkv's model.py JIT-builds its CUDA kernels only `if os.environ.get('RWKV_CUDA_ON') == '1':` (and under
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


def test_a_torch_cuda_extension_a_rocm_install_builds_needs_no_hip_build_of_its_own(tmp_path, run_json):
    """A CUDAExtension with clean kernels and no ROCm code: ROCm PyTorch's BuildExtension hipifies and compiles it,
    so the verdict is ready. Behind `CUDA_HOME is not None` (false on ROCm), with nothing built otherwise, the same
    extension is never built on ROCm: needs-port."""
    plain = ("from setuptools import setup\n"
             "from torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
             "setup(name='p', packages=['p'], ext_modules=[CUDAExtension('p._C', ['p/k.cu', 'p/b.cpp'])],\n"
             "      cmdclass={'build_ext': BuildExtension})\n")
    root = write_tree(tmp_path / "p", {"setup.py": plain, "p/__init__.py": "", "p/k.cu": KERNEL, "p/b.cpp": ""})
    _, data = run_json(root, "--no-cache")
    assert data["summary"]["verdict"] == "ready", data["summary"]["verdict_reason"]

    gated = ("from setuptools import setup\n"
             "from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CUDA_HOME\n"
             "ext = []\n"
             "if CUDA_HOME is not None:\n"
             "    ext = [CUDAExtension('p._C', ['p/k.cu', 'p/b.cpp'])]\n"
             "setup(name='p', packages=['p'], ext_modules=ext, cmdclass={'build_ext': BuildExtension})\n")
    root = write_tree(tmp_path / "q", {"setup.py": gated, "p/__init__.py": "", "p/k.cu": KERNEL, "p/b.cpp": ""})
    _, data = run_json(root, "--no-cache")
    assert data["summary"]["verdict"] == "needs-port", data["summary"]["verdict_reason"]


def test_an_nvcc_probe_whose_failure_leaves_every_gpu_extension_out_is_live(tmp_path, run_json):
    """fast-transformers: `def cuda_toolkit_available(): try: call(["nvcc"]) except FileNotFoundError: return
    False`, then `if cuda_toolkit_available(): extensions += [CUDAExtension(...)]`: ROCm has no nvcc, so the install
    is silently CPU-only. The same probe used only to pick a JIT fallback stays handled."""
    setup = ("from subprocess import call, DEVNULL\n"
             "from setuptools import setup\n"
             "from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension\n"
             "def cuda_toolkit_available():\n"
             "    try:\n"
             "        call(['nvcc'], stdout=DEVNULL, stderr=DEVNULL)\n"                    # line 6
             "        return True\n"
             "    except FileNotFoundError:\n"
             "        return False\n"
             "extensions = [CppExtension('f.cpu', ['f/cpu.cpp'])]\n"
             "if cuda_toolkit_available():\n"
             "    extensions += [CUDAExtension('f.gpu', ['f/gpu.cu'])]\n"
             "setup(name='f', packages=['f'], ext_modules=extensions, cmdclass={'build_ext': BuildExtension})\n")
    backend = ("from subprocess import call\n"
               "def jit_available():\n"
               "    try:\n"
               "        call(['nvcc'])\n"                                                   # line 4
               "        return True\n"
               "    except FileNotFoundError:\n"
               "        return False\n"
               "def load():\n"
               "    if jit_available():\n"
               "        return 'jit'\n"
               "    return None\n")
    root = write_tree(tmp_path / "f", {"setup.py": setup, "f/__init__.py": "", "f/_backend.py": backend,
                                       "f/cpu.cpp": "", "f/gpu.cu": KERNEL})
    _, data = run_json(root, "--no-cache")
    probes = {(f["path"], f["line"]): f["disposition"] for f in data["findings"] if f["rule"] == "RA655"}
    assert probes[("setup.py", 6)] == "live", probes
    assert probes.get(("f/_backend.py", 4), "guarded") == "guarded", probes


def test_the_only_gpu_build_behind_a_cuda_only_test_is_not_hidden_as_a_cuda_alternative(tmp_path, run_json):
    """megablocks: `if 'cu' in torch.__version__ and CUDA_HOME is not None:` holds the only CUDAExtension and its
    nvcc flags; a port opens that test to ROCm, so the flags are reported (not guarded). Beside a ROCm branch
    (`if torch.version.hip: ... else: <CUDA flags>`) the CUDA flags stay guarded."""
    only = ("import torch\n"
            "from setuptools import setup\n"
            "from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CUDAExtension\n"
            "ext_modules = []\n"
            "if 'cu' in torch.__version__ and CUDA_HOME is not None:\n"
            "    nvcc_flags = ['--ptxas-options=-v']\n"                                    # line 6
            "    ext_modules = [CUDAExtension('m_ops', ['csrc/ops.cu'], extra_compile_args={'nvcc': nvcc_flags})]\n"
            "setup(name='m', packages=['m'], ext_modules=ext_modules, cmdclass={'build_ext': BuildExtension})\n")
    assert _first_nvcc_flag(tmp_path / "m", only, run_json) == (6, False)

    beside = ("import torch\n"
              "from setuptools import setup\n"
              "from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CUDAExtension\n"
              "if torch.version.hip:\n"
              "    flags = ['-ffast-math']\n"
              "elif CUDA_HOME is not None:\n"
              "    flags = ['--ptxas-options=-v']\n"                                      # line 7
              "setup(name='m', packages=['m'], ext_modules=[CUDAExtension('m_ops', ['csrc/ops.cu'],\n"
              "      extra_compile_args={'nvcc': flags})], cmdclass={'build_ext': BuildExtension})\n")
    assert _first_nvcc_flag(tmp_path / "n", beside, run_json) == (7, True)


def _first_nvcc_flag(root, setup: str, run_json) -> tuple[int, bool]:
    """(line, guarded) of the first RA651 in a tree of this setup.py, a package and one kernel."""
    write_tree(root, {"setup.py": setup, "m/__init__.py": "", "csrc/ops.cu": KERNEL})
    _, data = run_json(root, "--no-cache")
    flag = next(f for f in data["findings"] if f["rule"] == "RA651")
    return flag["line"], flag["guarded"]
