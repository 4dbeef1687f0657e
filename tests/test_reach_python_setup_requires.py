"""`install_requires` assigned inside if/else in a setup.py (engines/python/setupreqs.py): every module-level
assignment of the name given to setup() is read, and the requirements of the branch a ROCm install skips are
guarded, while those of the branch it takes decide the verdict."""
from tests.conftest import write_tree

SETUP = (
    "import torch\n"
    "from setuptools import setup\n"
    "if {test}:\n"
    "    install_requires = ['numpy', {rocm}]\n"         # line 4
    "else:\n"
    "    install_requires = ['numpy', 'cupy-cuda12x']\n"  # line 6
    "setup(name='pkg', packages=['pkg'], install_requires=install_requires)\n"
)


def _requirements(tmp_path, run_json, **values) -> tuple[str, set[tuple[int, str, str]]]:
    root = write_tree(tmp_path / "r", {"setup.py": SETUP.format(**values), "pkg/__init__.py": ""})
    _, data = run_json(root, "--no-cache", "--fail-on", "never")
    found = {(f["line"], f["subject"], f["disposition"]) for f in data["findings"] if f["path"] == "setup.py"}
    return data["summary"]["verdict"], found


def test_the_branch_a_rocm_install_takes_decides(tmp_path, run_json):
    verdict, found = _requirements(tmp_path, run_json, test="torch.version.hip", rocm="'nvidia-nccl-cu12'")
    assert found == {(4, "nvidia-nccl-cu12", "live"), (6, "cupy-cuda12x", "guarded")}
    assert verdict == "needs-port"


def test_the_cuda_branch_alone_is_guarded(tmp_path, run_json):
    verdict, found = _requirements(tmp_path, run_json, test="torch.version.hip", rocm="'triton'")
    assert found == {(6, "cupy-cuda12x", "guarded")} and verdict == "ready"


def test_a_branch_on_something_else_is_read_on_both_sides(tmp_path, run_json):
    """`if sys.platform == "win32"`: either branch may be the install, so both are read."""
    verdict, found = _requirements(tmp_path, run_json, test="WINDOWS", rocm="'nvidia-nccl-cu12'")
    assert found == {(4, "nvidia-nccl-cu12", "live"), (6, "cupy-cuda12x", "live")}
