"""The calls layer of Python reach (match/engines/python/functions.py, model/rocmpath/pycalls.py): a function nothing calls is
not called by default, and what it holds is an optional feature, not work for a ROCm install. A call that is
commented out is no call; a JIT helper another kernel calls, and a public function of a shipped package (its
API), are reached."""
from tests.conftest import write_tree

PYPROJECT = "[project]\nname = 'pkg'\nversion = '1'\ndependencies = ['torch', 'triton']\n"
KERNELS = (
    "import triton\n"
    "import triton.language as tl\n"
    "\n"
    "@triton.jit\n"
    "def _ptx_tanh(x):\n"
    "    return tl.inline_asm_elementwise('tanh.approx.f32 $0, $1;', '=r,r', [x], dtype=tl.float32, is_pure=True, pack=1)\n"  # 6
    "\n"
    "@triton.jit\n"
    "def _ptx_rcp(x):\n"
    "    return tl.inline_asm_elementwise('rcp.approx.f32 $0, $1;', '=r,r', [x], dtype=tl.float32, is_pure=True, pack=1)\n"  # 10
    "\n"
    "@triton.jit\n"
    "def _scale_kernel(x_ptr, n):\n"
    "    x = tl.load(x_ptr + tl.arange(0, 16))\n"
    "    tl.store(x_ptr + tl.arange(0, 16), _ptx_rcp(x))\n"
    "\n"
    "def scale(x):\n"
    "    _scale_kernel[(1,)](x, x.numel())\n"
)


def _rows(data: dict, path: str) -> dict[int, tuple[str, str]]:
    return {f["line"]: (f["disposition"], f["disposition_note"]) for f in data["findings"] if f["path"] == path}


def test_a_jit_helper_nothing_calls_is_not_called_by_default(tmp_path, run_json):
    root = write_tree(tmp_path / "r", {"pyproject.toml": PYPROJECT, "pkg/__init__.py": "from pkg.kernels import scale\n",
                                       "pkg/kernels.py": KERNELS})
    _, data = run_json(root, "--no-cache", "--fail-on", "never")
    rows = _rows(data, "pkg/kernels.py")
    assert rows[6] == ("optional feature", "not called by default: no code of the project calls `_ptx_tanh`")
    assert rows[10][0] == "live"          # called by the kernel `scale` launches: reached
    assert data["summary"]["verdict"] != "ready"


def test_a_function_whose_only_call_is_commented_out_is_not_called(tmp_path, run_json):
    """A script directory the packaging does not ship: `main` runs, `_query_nvml`'s only call is a comment."""
    script = (
        "def _query_nvml():\n"
        "    import pynvml\n"                      # 2: not called by default
        "    pynvml.nvmlInit()\n"
        "\n"
        "def main():\n"
        "    import pycuda.autoinit\n"             # 6: called from the script's entry point
        "    # _query_nvml()\n"
        "\n"
        "if __name__ == '__main__':\n"
        "    main()\n"
    )
    root = write_tree(tmp_path / "r", {"profile_gpu.py": script})
    _, data = run_json(root, "--no-cache", "--fail-on", "never")
    rows = _rows(data, "profile_gpu.py")
    assert rows[2] == ("optional feature", "not called by default: no code of the project calls `_query_nvml`")
    assert rows[6][0] == "live"


def test_a_public_function_of_a_shipped_package_is_its_api(tmp_path, run_json):
    module = "def query():\n    import pynvml\n    return pynvml.nvmlInit()\n"
    root = write_tree(tmp_path / "r", {"pyproject.toml": PYPROJECT, "pkg/__init__.py": "",
                                       "pkg/gpu.py": module})
    _, data = run_json(root, "--no-cache", "--fail-on", "never")
    assert not any(d == "optional feature" for d, _ in _rows(data, "pkg/gpu.py").values())


CONFIG = "class Config:\n    attention_backend = {default!r}\n"
SELECTING = (
    "import subprocess\n"
    "def attention(q, cfg):\n"
    "    if cfg.attention_backend == 'cuda_jit':\n"
    "        subprocess.run(['nvidia-smi', '-L'])\n"      # 4: runs only when the backend is chosen
    "        return q\n"
    "    return q * 2\n"
    "\n"
    "def set_fuser(name):\n"
    "    if name == 'nvfuser':\n"
    "        subprocess.run(['nvidia-smi', '-q'])\n"      # 10: runs only when a caller passes 'nvfuser'
)


def test_a_backend_no_default_or_caller_selects_is_an_optional_feature(tmp_path, run_json):
    root = write_tree(tmp_path / "r", {"pyproject.toml": PYPROJECT, "pkg/__init__.py": "",
                                       "pkg/config.py": CONFIG.format(default="triton"),
                                       "pkg/attention.py": SELECTING})
    _, data = run_json(root, "--no-cache", "--fail-on", "never")
    rows = _rows(data, "pkg/attention.py")
    assert rows[4][0] == rows[10][0] == "optional feature"
    assert "runs only when a caller chooses `cuda_jit`" in rows[4][1]


def test_a_backend_the_configuration_default_selects_is_reached(tmp_path, run_json):
    root = write_tree(tmp_path / "r", {"pyproject.toml": PYPROJECT, "pkg/__init__.py": "",
                                       "pkg/config.py": CONFIG.format(default="cuda_jit"),
                                       "pkg/attention.py": SELECTING,
                                       "pkg/fusion.py": "from pkg.attention import set_fuser\nset_fuser('nvfuser')\n"})
    _, data = run_json(root, "--no-cache", "--fail-on", "never")
    rows = _rows(data, "pkg/attention.py")
    assert rows[4][0] == rows[10][0] == "live"


def test_a_branch_any_of_several_names_selects_is_reached_when_one_of_them_is_passed(tmp_path, run_json):
    # `mode == "a" or mode == "b"` is one choice: optional while no caller passes either name, reached once one does
    selecting = ("import torch\n"
                 "def set_jit(mode):\n"
                 "    if mode == 'nvf' or mode == 'nvfuser':\n"
                 "        torch._C._jit_set_nvfuser_enabled(True)\n"          # 4
                 "    elif mode == 'legacy' or mode == 'old':\n"
                 "        torch._C._jit_set_nvfuser_guard_mode(True)\n"        # 6
                 "    return mode\n")
    root = write_tree(tmp_path / "r", {"pyproject.toml": PYPROJECT, "pkg/__init__.py": "",
                                       "pkg/jit.py": selecting,
                                       "pkg/warm.py": "from pkg.jit import set_jit\nset_jit('old')\n"})
    _, data = run_json(root, "--no-cache", "--fail-on", "never")
    rows = _rows(data, "pkg/jit.py")
    assert rows[4][0] == "optional feature"
    assert "chooses `nvf` or `nvfuser`" in rows[4][1]
    assert rows[6][0] == "live"


def test_only_a_string_passed_as_a_value_makes_a_choice_not_an_identifier_of_that_name(tmp_path, run_json):
    selecting = ("import torch\n"
                 "def set_jit(mode):\n"
                 "    if mode == 'legacy' or mode == 'old':\n"
                 "        torch._C._jit_set_nvfuser_enabled(True)\n"          # 4
                 "    return mode\n")
    root = write_tree(tmp_path / "r", {"pyproject.toml": PYPROJECT, "pkg/__init__.py": "",
                                       "pkg/jit.py": selecting,
                                       "pkg/swap.py": "def swap(old, new):\n    legacy = old\n    return new, legacy\n"})
    _, data = run_json(root, "--no-cache", "--fail-on", "never")
    assert _rows(data, "pkg/jit.py")[4][0] == "optional feature"
