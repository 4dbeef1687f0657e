"""The general causes behind the sixth blind set's misses (session 11, branch blind11), each on a small tree built
from what a real project does: a CUDA version read from the environment that falls back to `torch.version.cuda`
(AutoAWQ_kernels' setup.py), a CUDA gate whose ROCm branch only raises (Deformable-DETR's ops/setup.py), and
compiler flags handed to setup() itself (hqq's setup_cuda.py)."""
from tests.conftest import write_tree

EXT = "from setuptools import setup\nfrom torch.utils.cpp_extension import BuildExtension, CUDAExtension\n"
KERNEL = "__global__ void k(float* x) { x[threadIdx.x] = 0.f; }\n"


def _by_rule(data: dict, rule: str) -> list[tuple[str, int, str]]:
    return [(f["path"], f["line"], f["disposition"]) for f in data["findings"] if f["rule"] == rule]


def _versioned_setup(default: str) -> str:
    """AutoAWQ_kernels: the CUDA version, overridable from the environment, chooses the CUDA-only extension and
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


def _gated_setup(otherwise: str) -> str:
    return (EXT.replace("CUDAExtension\n", "CUDAExtension, CppExtension, CUDA_HOME\n") + "import torch\n"
            "extension, sources = CppExtension, ['vision.cpp']\n"
            "if torch.cuda.is_available() and CUDA_HOME is not None:\n"     # line 5
            "    extension = CUDAExtension\n"
            "    sources += ['attn.cu']\n"
            "else:\n"
            f"    {otherwise}\n"
            "setup(name='msda', ext_modules=[extension('MSDA', sources)], cmdclass={'build_ext': BuildExtension})\n")


def test_a_cuda_gate_whose_rocm_branch_only_raises_is_the_port_site(tmp_path, run_json):
    """Deformable-DETR: `if ... and CUDA_HOME is not None:` else `raise NotImplementedError`: ROCm goes to the
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
    """hqq's setup_cuda.py passes extra_compile_args to setup(), which ignores it ("Unknown distribution option"):
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
