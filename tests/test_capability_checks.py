"""Runtime checks read for what they do on ROCm: a capability formatted into a lookup key is a capability check,
one that only decides a warning or refuses GPUs older than any AMD GPU reports is no finding, and a CUDA version
shown in a raised message is a message."""
from tests.conftest import write_tree



def _finding(report: dict, path: str, rule: str) -> dict | None:
    return next((f for f in report["findings"] if f["path"] == path and f["rule"] == rule), None)



def _by_rule(data: dict, rule: str) -> list[tuple[str, int, str]]:
    return [(f["path"], f["line"], f["disposition"]) for f in data["findings"] if f["rule"] == rule]



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
