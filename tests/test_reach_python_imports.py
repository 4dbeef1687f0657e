"""The imports layer of Python reach (model/rocmpath/pyreach.imported_modules_of): a module under a directory named as
optional (`examples/`, `tests/`) that the package's `__init__` imports at import time is no optional example: on
ROCm `import pkg` fails with it. One nothing imports stays optional by its name."""
import pytest

from tests.conftest import write_tree

DEMO = "import subprocess\ndef run_demo():\n    return subprocess.run(['nvidia-smi', '-L'])\n"   # line 3
PYPROJECT = "[project]\nname = 'pkg'\nversion = '1'\ndependencies = ['torch']\n"


@pytest.mark.parametrize(("init", "disposition", "verdict"), [
    ("from pkg.examples.demo import run_demo\n", "live", "needs-port"),
    ("", "optional", "ready"),
])
def test_an_example_module_the_package_imports_is_on_the_install_path(tmp_path, run_json, init, disposition, verdict):
    root = write_tree(tmp_path / "r", {"pyproject.toml": PYPROJECT, "pkg/__init__.py": init,
                                       "pkg/examples/demo.py": DEMO})
    _, data = run_json(root, "--no-cache", "--fail-on", "never")
    assert [(f["path"], f["line"], f["disposition"]) for f in data["findings"]] == \
        [("pkg/examples/demo.py", 3, disposition)]
    assert data["summary"]["verdict"] == verdict
