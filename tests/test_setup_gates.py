"""How a setup.py's CUDA gates and branches are read for ROCm: a gate that admits ROCm (also through an
`or`) is a ROCm build, one whose else only raises or prints is the port site, flags on the ROCm branch of a
CUDAExtension make it a ROCm build, an nvcc probe or a CUDA-only test that leaves every GPU extension out stays
live, an environment CUDA version falling back to torch.version.cuda is unset on ROCm, and compiler flags given to
setup() itself are no compiler flags."""
from tests.conftest import write_tree



def _finding(report: dict, path: str, rule: str) -> dict | None:
    return next((f for f in report["findings"] if f["path"] == path and f["rule"] == rule), None)



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
KERNEL = "__global__ void k(float* x) { x[threadIdx.x] *= 2.f; }\n"
SPARSE_SETUP = (
    "import glob, os, os.path as osp\n"
    "from itertools import product\n"
    "import torch\n"
    "from setuptools import setup\n"
    "from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CppExtension, CUDAExtension\n"
    "WITH_CUDA = torch.cuda.is_available() and (CUDA_HOME is not None or torch.version.hip)\n"
    "suffices = ['cpu', 'cuda'] if WITH_CUDA else ['cpu']\n"
    "def get_extensions():\n"
    "    extensions = []\n"
    "    extensions_dir = osp.join('csrc')\n"
    "    for main, suffix in product(glob.glob(osp.join(extensions_dir, '*.cpp')), suffices):\n"
    "        name = main.split(os.sep)[-1][:-4]\n"
    "        sources, define_macros = [main], []\n"
    "        if suffix == 'cuda':\n"
    "            define_macros += [('WITH_CUDA', None)]\n"
    "            if torch.version.hip:\n"
    "                define_macros += [('USE_ROCM', None)]\n"
    "        path = osp.join(extensions_dir, 'cuda', f'{name}_cuda.cu')\n"
    "        if suffix == 'cuda' and osp.exists(path):\n"
    "            sources += [path]\n"
    "        Extension = CppExtension if suffix == 'cpu' else CUDAExtension\n"
    "        extensions += [Extension(f'sp._{name}_{suffix}', sources, define_macros=define_macros)]\n"
    "    return extensions\n"
    "setup(name='sp', packages=['sp'], ext_modules=get_extensions(), cmdclass={'build_ext': BuildExtension})\n"
)
SPMM = ("#include \"utils.cuh\"\n"
        "__global__ void spmm(const int* rowptr, float* out) {\n"
        "  int thread_idx = blockDim.x * blockIdx.x + threadIdx.x;\n"
        "  int row = thread_idx >> 5;\n"                                    # line 4
        "  float v = SHFL_SYNC(FULL_MASK, (float)rowptr[row], 0);\n"
        "  out[row] = v;\n"
        "}\n")
UTILS = ("#pragma once\n#define FULL_MASK 0xffffffff\n#ifdef USE_ROCM\n"
         "#define SHFL_SYNC(mask, var, delta) __shfl(var, delta)\n#else\n#define SHFL_SYNC __shfl_sync\n#endif\n")


def _first_nvcc_flag(root, setup: str, run_json) -> tuple[int, bool]:
    """(line, guarded) of the first RA651 in a tree of this setup.py, a package and one kernel."""
    write_tree(root, {"setup.py": setup, "m/__init__.py": "", "csrc/ops.cu": KERNEL})
    _, data = run_json(root, "--no-cache")
    flag = next(f for f in data["findings"] if f["rule"] == "RA651")
    return flag["line"], flag["guarded"]



def _by_rule(data: dict, rule: str) -> list[tuple[str, int, str]]:
    return [(f["path"], f["line"], f["disposition"]) for f in data["findings"] if f["rule"] == rule]

EXT = "from setuptools import setup\nfrom torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"


def _versioned_setup(default: str) -> str:
    """The CUDA version, overridable from the environment, chooses the CUDA-only extension and
    its -gencode flags; the same name is rebuilt (shortened) only when it is already set."""
    return (EXT + "import os\nimport torch\n"
            f"CUDA_VERSION = os.getenv('CUDA_VERSION', {default}) or torch.version.cuda\n"   # line 5
            "if CUDA_VERSION:\n"
            "    CUDA_VERSION = ''.join(CUDA_VERSION.split('.'))[:3]\n"
            "flags = []\n"
            "if CUDA_VERSION:\n"
            "    flags += ['-gencode', 'arch=compute_80,code=sm_80']\n"                      # line 10
            "ext = [CUDAExtension('q_ext', ['q.cu'], extra_compile_args={'nvcc': flags})]\n"
            "setup(name='q', ext_modules=ext, cmdclass={'build_ext': BuildExtension})\n")



def _gated_setup(otherwise: str) -> str:
    return (EXT.replace("CUDAExtension\n", "CUDAExtension, CppExtension, CUDA_HOME\n") + "import torch\n"
            "extension, sources = CppExtension, ['vision.cpp']\n"
            "if torch.cuda.is_available() and CUDA_HOME is not None:\n"     # line 5
            "    extension = CUDAExtension\n"
            "    sources += ['attn.cu']\n"
            "else:\n"
            f"    {otherwise}\n"
            "setup(name='msda', ext_modules=[extension('MSDA', sources)], cmdclass={'build_ext': BuildExtension})\n")

HEADER = ("#pragma once\n"
          "#ifdef WITH_CUDA\n"                       # line 2: the switch the GPU branch defines
          "void k_cuda(float* x);\n"
          "#endif\n")


def _setup(gate: str) -> str:
    return ("import os\n"
            "import torch\n"
            "from setuptools import setup\n"
            "from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension, CUDA_HOME, ROCM_HOME\n"
            "is_rocm = torch.version.hip is not None\n"
            "force_cuda = os.getenv('FORCE_CUDA', '0') == '1'\n"
            "gpu_home_available = CUDA_HOME is not None or (is_rocm and ROCM_HOME is not None)\n"
            "extension, sources, macros = CppExtension, ['p/b.cpp'], []\n"
            f"if {gate}:\n"
            "    extension = CUDAExtension\n"
            "    sources += ['p/k.cu']\n"
            "    macros += [('WITH_CUDA', None)]\n"
            "setup(name='p', packages=['p'], ext_modules=[extension('p._C', sources, define_macros=macros)],\n"
            "      cmdclass={'build_ext': BuildExtension})\n")



def _tree(tmp_path, name: str, gate: str):
    return write_tree(tmp_path / name, {"setup.py": _setup(gate), "p/__init__.py": "", "p/k.cu": KERNEL,
                                        "p/k.h": HEADER, "p/b.cpp": '#include "k.h"\n'})

GATED = ("from setuptools import setup\n"
         "from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension, CUDA_HOME\n"
         "ext_modules = []\n"
         "if CUDA_HOME is not None:\n"
         "    ext_modules.append(CUDAExtension('p._C', ['csrc/k.cu']))\n"
         "else:\n"
         "    {otherwise}\n"
         "setup(name='p', packages=['p'], ext_modules=ext_modules, cmdclass={{'build_ext': BuildExtension}})\n")


def _gate(tmp_path, run_json, otherwise: str) -> dict:
    root = write_tree(tmp_path / "p", {"setup.py": GATED.format(otherwise=otherwise), "p/__init__.py": "",
                                       "csrc/k.cu": "__global__ void k(float* x) { x[threadIdx.x] = 0.f; }\n"})
    _, data = run_json(root, "--no-cache")
    return {f["line"]: f["disposition"] for f in data["findings"] if f["rule"] == "RA653"}



def test_a_flag_on_the_rocm_branch_of_a_cuda_extension_is_a_rocm_build(tmp_path, run_json):
    """`if torch.version.hip:` adds `-ffast-math`; the nvcc-only flags and the fallback arch list
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



def test_a_per_suffix_loop_and_joined_source_paths_put_the_kernel_in_the_rocm_build(tmp_path, run_json):
    """`for main, suffix in product(files, suffices)` then `if suffix == 'cuda':` is one
    variant of a loop (the 'cuda' variant is the GPU build on ROCm too, which adds USE_ROCM), and the kernel comes
    from `osp.join(extensions_dir, 'cuda', f'{name}_cuda.cu')`. Its 32-lane rows, shuffled through the project's
    SHFL_SYNC macro, are in code the ROCm build compiles: to verify on a 64-lane GPU, not a CUDA-only file."""
    root = write_tree(tmp_path / "sp", {
        "setup.py": SPARSE_SETUP, "sp/__init__.py": "",
        "csrc/spmm.cpp": "#include <torch/extension.h>\n", "csrc/cuda/spmm_cuda.cu": SPMM,
        "csrc/cuda/utils.cuh": UTILS,
    })
    _, data = run_json(root, "--no-cache")
    lanes = next(f for f in data["findings"] if f["rule"] == "RA203")
    assert (lanes["path"], lanes["line"]) == ("csrc/cuda/spmm_cuda.cu", 4)
    assert lanes["disposition"] == "verify on hardware", lanes["disposition_note"]



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
    """`def cuda_toolkit_available(): try: call(["nvcc"]) except FileNotFoundError: return
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
    """`if 'cu' in torch.__version__ and CUDA_HOME is not None:` holds the only CUDAExtension and its
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



def test_an_environment_cuda_version_falling_back_to_torch_version_cuda_is_false_on_rocm(tmp_path, run_json):
    """`os.getenv("CUDA_VERSION", None) or torch.version.cuda` is None on ROCm (the variable unset, the evaluator's
    default), and `if CUDA_VERSION: CUDA_VERSION = ...` cannot make it true: line 10 is the CUDA branch."""
    root = write_tree(tmp_path / "q", {"setup.py": _versioned_setup("None"), "q.cu": KERNEL})
    _, data = run_json(root, "--no-cache")
    assert ("setup.py", 10, "CUDA branch of a build script") in _by_rule(data, "RA651")



def test_an_environment_value_with_a_default_is_not_read_as_unset(tmp_path, run_json):
    """The same setup.py whose environment read defaults to "12.1": CUDA_VERSION is set on ROCm too, so the flags
    are live."""
    root = write_tree(tmp_path / "q", {"setup.py": _versioned_setup("'12.1'"), "q.cu": KERNEL})
    _, data = run_json(root, "--no-cache")
    assert ("setup.py", 10, "live") in _by_rule(data, "RA651")



def test_a_cuda_gate_whose_rocm_branch_only_raises_is_the_port_site(tmp_path, run_json):
    """`if ... and CUDA_HOME is not None:` else `raise NotImplementedError`: ROCm goes to the
    raise, so the gate line is live work and the project needs a port."""
    root = write_tree(tmp_path / "m", {"setup.py": _gated_setup("raise NotImplementedError('Cuda is not available')"),
                                       "vision.cpp": "int v() { return 0; }\n", "attn.cu": KERNEL})
    _, data = run_json(root, "--no-cache")
    assert _by_rule(data, "RA653") == [("setup.py", 5, "live")]
    assert data["summary"]["verdict"] == "needs-port"



def test_a_cuda_gate_with_a_working_rocm_branch_stays_a_cuda_branch(tmp_path, run_json):
    """The same gate whose else builds on (CPU sources): the test stays the CUDA branch's."""
    root = write_tree(tmp_path / "m", {"setup.py": _gated_setup("sources += ['cpu_attn.cpp']"),
                                       "vision.cpp": "int v() { return 0; }\n", "attn.cu": KERNEL})
    _, data = run_json(root, "--no-cache")
    assert _by_rule(data, "RA653") == [("setup.py", 5, "CUDA branch of a build script")]



def test_compiler_flags_given_to_setup_itself_are_ignored(tmp_path, run_json):
    """A setup_cuda.py passes extra_compile_args to setup(), which ignores it ("Unknown distribution option"):
    no flag reaches hipcc. The same flags on the CUDAExtension inside setup() are reported."""
    dead = (EXT + "setup(name='h', ext_modules=[CUDAExtension('h_ext', ['h.cu'])],\n"
            "      extra_compile_args={'cxx': ['-O3'], 'nvcc': ['-O3', '--use_fast_math']},\n"
            "      cmdclass={'build_ext': BuildExtension})\n")
    live = (EXT + "setup(name='h', ext_modules=[CUDAExtension('h_ext', ['h.cu'],\n"
            "      extra_compile_args={'cxx': ['-O3'], 'nvcc': ['-O3', '--use_fast_math']})],\n"
            "      cmdclass={'build_ext': BuildExtension})\n")
    root = write_tree(tmp_path / "h", {"setup.py": dead, "h.cu": KERNEL})
    _, data = run_json(root, "--no-cache")
    assert _by_rule(data, "RA651") == []
    root = write_tree(tmp_path / "h2", {"setup.py": live, "h.cu": KERNEL})
    _, data = run_json(root, "--no-cache")
    assert [(path, line) for path, line, _ in _by_rule(data, "RA651")] == [("setup.py", 4)]



def test_a_gate_that_admits_rocm_through_an_or_is_the_rocm_build(tmp_path, run_json):
    root = _tree(tmp_path, "p", "(torch.cuda.is_available() and gpu_home_available) or force_cuda")
    _, data = run_json(root, "--no-cache")
    summary = data["summary"]
    assert summary["verdict"] == "ready", summary["verdict_reason"]
    assert "setup.py:9 switches to a ROCm build" in summary["verdict_reason"]
    gates = {(f["path"], f["line"]): f["disposition"] for f in data["findings"] if f["rule"] == "RA846"}
    assert gates == {("p/k.h", 2): "guarded"}, gates



def test_a_gate_rocm_fails_is_no_rocm_build_even_inside_an_or(tmp_path, run_json):
    """`(is_available() and CUDA_HOME is not None) or force_cuda`: ROCm passes only with FORCE_CUDA set."""
    root = _tree(tmp_path, "q", "(torch.cuda.is_available() and CUDA_HOME is not None) or force_cuda")
    _, data = run_json(root, "--no-cache")
    summary = data["summary"]
    assert "switches to a ROCm build" not in summary["verdict_reason"]
    assert summary["verdict"] == "needs-port", summary["verdict_reason"]



def test_a_cuda_gate_whose_else_only_prints_is_live_at_its_test(tmp_path, run_json):
    """ROCm torch has no CUDA_HOME: it takes the else, prints, and installs without the extension."""
    assert _gate(tmp_path, run_json, "print('CUDA not found: building without the GPU kernels')") == {4: "live"}



def test_a_cuda_gate_whose_else_builds_something_is_not_a_silent_drop(tmp_path, run_json):
    """An else that builds its own extension is a branch the project chose; the gate stays the CUDA branch's."""
    assert _gate(tmp_path, run_json, "ext_modules.append(CppExtension('p._C', ['csrc/k.cpp']))") == {
        4: "CUDA branch of a build script"}

