"""Runtime checks read for what they do on ROCm: a capability formatted into a lookup key is a capability check,
one that only decides a warning or refuses GPUs older than any AMD GPU reports is no finding, and a CUDA version
shown in a raised message is a message."""
from tests.conftest import write_tree



def _finding(report: dict, path: str, rule: str) -> dict | None:
    return next((f for f in report["findings"] if f["path"] == path and f["rule"] == rule), None)



def _by_rule(data: dict, rule: str) -> list[tuple[str, int, str]]:
    return [(f["path"], f["line"], f["disposition"]) for f in data["findings"] if f["rule"] == rule]



def test_a_capability_formatted_into_a_table_key_is_reported_and_one_deciding_a_warning_is_not(tmp_path, run_json):
    """A kernel sizes shared memory from a table keyed by f"{major}.{minor}" (MI300X's "9.4" raises); a loader
    only prints a warning when no GPU has major >= 8."""
    root = write_tree(tmp_path / "repo", {
        "pyproject.toml": "[project]\nname = \"pkg\"\nversion = \"1\"\ndependencies = [\"torch\"]\n",
        "pkg/__init__.py": "",
        "pkg/shm.py": (
            "import torch\n"
            "shm_size_dict = {'8.0': 163000, '9.0': 227000}\n"
            "cc = f'{torch.cuda.get_device_properties(0).major}.{torch.cuda.get_device_properties(0).minor}'\n"
            "if cc not in shm_size_dict:\n    raise NotImplementedError\n"
            "shm_size_cap = shm_size_dict[cc]\n"),
        "pkg/attn.py": (
            "import torch\n"
            "newer = any(torch.cuda.get_device_properties(i).major >= 8 for i in range(torch.cuda.device_count()))\n"
            "if not newer:\n    print('unsupported GPUs were detected')\n"),
    })
    _, report = run_json(root, "--fail-on", "never")
    key = _finding(report, "pkg/shm.py", "RA502")
    assert key is not None and key["line"] == 3 and key["disposition"] == "live"
    assert _finding(report, "pkg/attn.py", "RA502") is None



def test_a_cuda_version_in_a_raised_message_is_a_message(tmp_path, run_json):
    """`raise ValueError(f"... {torch.version.cuda=}")` shows the value; parsing it on the next line is still
    reported."""
    script = ("import torch\n"
              "def cuda_tag():\n"
              "    if torch.version.cuda is None:\n"
              "        raise ValueError(f'needs a CUDA build of PyTorch, got {torch.version.cuda=}')\n"
              "    return 'cu' + torch.version.cuda.replace('.', '')\n")
    root = write_tree(tmp_path / "p", {
        "pyproject.toml": "[project]\nname = 'p'\nversion = '1'\n", "p/__init__.py": "", "p/tag.py": script})
    _, data = run_json(root, "--no-cache")
    assert [(f["path"], f["line"]) for f in data["findings"] if f["rule"] == "RA501"] == [("p/tag.py", 5)]



def test_a_capability_test_that_refuses_old_gpus_is_no_finding(tmp_path, run_json):
    """`capability = get_device_capability()` read only by `if capability[0] < 8: raise`: every AMD GPU
    reports major 9 or more, so ROCm never raises. A Hopper test (`< 9`, which MI300 passes), a `>=` that picks code
    and a refusal with an else stay reported."""
    module = ("import torch\n"
              "def forward():\n"
              "    capability = torch.cuda.get_device_capability()\n"        # line 3: not reported
              "    if capability[0] < 8:\n"
              "        raise RuntimeError('needs compute capability >= 80')\n"
              "def hopper():\n"
              "    capability = torch.cuda.get_device_capability()\n"        # line 7
              "    if capability[0] < 9:\n"
              "        raise RuntimeError('needs Hopper')\n"
              "def backward():\n"
              "    capability = torch.cuda.get_device_capability()\n"        # line 11
              "    return capability[0] >= 8\n"
              "def tuple_refusal():\n"
              "    if torch.cuda.get_device_capability() < (8, 0):\n"        # line 14: not reported
              "        raise RuntimeError('too old')\n"
              "def refusal_with_else():\n"
              "    if torch.cuda.get_device_capability()[0] < 8:\n"          # line 17
              "        raise RuntimeError('too old')\n"
              "    else:\n"
              "        return 'tensor cores'\n")
    root = write_tree(tmp_path / "a", {"pyproject.toml": "[project]\nname = 'a'\nversion = '1'\n",
                                       "a/__init__.py": "", "a/kernels.py": module})
    _, data = run_json(root, "--no-cache")
    assert [line for path, line, _ in _by_rule(data, "RA502") if path == "a/kernels.py"] == [7, 11, 17]

