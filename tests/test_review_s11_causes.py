"""A cause found reading findings by hand this session: a CUDA gate whose else only prints drops the GPU build on
ROCm as silently as a gate with no else (blind11's follow-up: the skipped branch is the CUDAExtension)."""
from tests.conftest import write_tree

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


def test_a_cuda_gate_whose_else_only_prints_is_live_at_its_test(tmp_path, run_json):
    """ROCm torch has no CUDA_HOME: it takes the else, prints, and installs without the extension."""
    assert _gate(tmp_path, run_json, "print('CUDA not found: building without the GPU kernels')") == {4: "live"}


def test_a_cuda_gate_whose_else_builds_something_is_not_a_silent_drop(tmp_path, run_json):
    """An else that builds its own extension is a branch the project chose; the gate stays the CUDA branch's."""
    assert _gate(tmp_path, run_json, "ext_modules.append(CppExtension('p._C', ['csrc/k.cpp']))") == {
        4: "CUDA branch of a build script"}
