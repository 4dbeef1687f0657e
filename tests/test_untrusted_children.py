"""Processes rocm-audit starts run this installation's code only: a user standing in a checkout that holds a
package named `auditor` (a scanned repository may) never runs it, whichever command starts a Python child."""
import ast
import json
import subprocess
from pathlib import Path

import pytest

from auditor.util.childpython import REFUSED, module_command
from tests.conftest import REPO, write_tree
from tests.fleetrepos import PORTABLE, run_fleet
from tests.gitrepo import GitRepo

PLANTED = "from pathlib import Path\nPath({marker!r}).write_text('ran')\n"


def planted_checkout(root: Path) -> Path:
    """A checkout holding `auditor/` whose every module, imported, writes root/MARKER."""
    code = PLANTED.format(marker=str(root / "MARKER"))
    return write_tree(root, {"auditor/__init__.py": code, "auditor/cli/fleet/__init__.py": code,
                             "auditor/cli/fleet/__main__.py": code, "auditor/__main__.py": code})


@pytest.mark.slow
def test_fleet_started_in_a_checkout_holding_auditor_never_imports_it(tmp_path, monkeypatch):
    checkout = planted_checkout(tmp_path / "checkout")
    repo = GitRepo(tmp_path / "org/portable", PORTABLE)
    monkeypatch.chdir(checkout)
    code, portfolio = run_fleet(repo.root, "--out", tmp_path / "out")
    assert not (checkout / "MARKER").exists()
    assert code == 0
    assert [(r["name"], r["status"], r["verdict"]) for r in portfolio["repositories"]] == \
        [("portable", "scanned", "ready")]


def test_a_child_that_would_import_another_auditor_refuses_to_start(tmp_path):
    """The child checks where `auditor` comes from before importing it: a path that puts another one first
    (here the planted checkout, as PYTHONPATH or a .pth file could) stops it, with nothing of it run."""
    checkout = planted_checkout(tmp_path / "checkout")
    command = module_command("auditor.cli.fleet")
    paths = json.loads(command[4])
    command[4] = json.dumps([str(checkout), *paths])
    done = subprocess.run(command, input=b"{}", capture_output=True, cwd=checkout, timeout=60)
    assert done.returncode == REFUSED and done.stdout == b""
    assert b"refusing to run" in done.stderr
    assert not (checkout / "MARKER").exists()


def test_every_python_child_is_started_through_the_pinned_launcher():
    """`sys.executable` (a Python child: `-m`, `-c`) is named in one module of auditor/, the launcher."""
    naming = []
    for path in sorted((REPO / "auditor").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(isinstance(node, ast.Attribute) and node.attr == "executable" and isinstance(node.value, ast.Name)
               and node.value.id == "sys" for node in ast.walk(tree)):
            naming.append(path.relative_to(REPO).as_posix())
    assert naming == ["auditor/util/childpython.py"]


def test_the_scans_worker_processes_do_not_import_the_current_directorys_auditor(tmp_path, monkeypatch):
    """`check -j 2` scans in a pool of worker processes: forked from the command, they import nothing afresh
    (a spawned or forkserver worker would start with the current directory first on its path)."""
    from auditor.cli.app import main

    checkout = planted_checkout(tmp_path / "checkout")
    write_tree(checkout, {"multiprocessing/__init__.py": PLANTED.format(marker=str(checkout / "MARKER"))})
    kernels = {f"k{n}.cu": "__global__ void k(float* x) { x[0] = __shfl_xor_sync(0xffffffff, x[0], 1); }\n"
               for n in range(4)}   # C/C++ files: scanned by the pool even when few
    repo = GitRepo(tmp_path / "repo", {**PORTABLE, **kernels, "b.py": "import pynvml\n"})
    monkeypatch.chdir(checkout)
    code = main([str(repo.root), "--format", "json", "--no-progress", "--no-cache", "-j", "2", "-o",
                 str(tmp_path / "report.json")])
    assert not (checkout / "MARKER").exists()
    assert code == 1
    assert "b.py" in {f["path"] for f in json.loads((tmp_path / "report.json").read_text())["findings"]}
