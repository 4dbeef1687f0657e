"""A shell script pip's build never runs is a developer's script (auditor/model/rocmpath/devscripts.py): where pip
installs the component, only what its build backend runs (setup.py, the pyproject's backend, the CMake files it
drives) is the install. A script one of those names, or a script of a tree pip does not install, is."""
from tests.conftest import write_tree

PYPROJECT = "[build-system]\nrequires = ['setuptools']\n[project]\nname = 'quantkit'\nversion = '1'\n"
DEV_SCRIPT = (
    "#!/bin/bash\n"
    "python3 -m venv .venv\n"
    "pip install --pre torch --index-url https://download.pytorch.org/whl/nightly/cu118\n"   # 3
    "pip install ruff pytest\n"
)


def _at(data: dict, path: str, line: int) -> set[str]:
    return {f["disposition"] for f in data["findings"] if f["path"] == path and f["line"] == line}


def test_a_root_script_pip_never_runs_is_a_developer_script(tmp_path, run_json):
    root = write_tree(tmp_path / "r", {"pyproject.toml": PYPROJECT, "quantkit/__init__.py": "import torch\n",
                                       "setup.sh": DEV_SCRIPT})
    _, data = run_json(root, "--no-cache", "--fail-on", "never")
    assert _at(data, "setup.sh", 3) == {"ops"}
    assert data["summary"]["verdict"] == "ready"


def test_a_script_the_build_script_runs_is_the_install(tmp_path, run_json):
    setup = "import subprocess\nfrom setuptools import setup\nsubprocess.check_call(['bash', 'setup.sh'])\nsetup()\n"
    root = write_tree(tmp_path / "r", {"pyproject.toml": PYPROJECT, "setup.py": setup,
                                       "quantkit/__init__.py": "import torch\n", "setup.sh": DEV_SCRIPT})
    _, data = run_json(root, "--no-cache", "--fail-on", "never")
    assert _at(data, "setup.sh", 3) == {"live"}
    assert data["summary"]["verdict"] == "needs-port"


def test_the_script_of_a_tree_pip_does_not_install_is_its_install(tmp_path, run_json):
    root = write_tree(tmp_path / "r", {"train.py": "import torch\n", "setup.sh": DEV_SCRIPT})
    _, data = run_json(root, "--no-cache", "--fail-on", "never")
    assert _at(data, "setup.sh", 3) == {"live"}
