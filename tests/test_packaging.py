"""The rules and the bundled example ship inside the wheel (read through importlib.resources)."""
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO


@pytest.mark.slow   # pip builds the wheel; the fast run checks the build configuration that decides its contents
def test_wheel_contains_rules_schema_example_and_report_templates(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(REPO)],
        capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    wheel = next(tmp_path.glob("rocm_audit-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped_rules = {n.removeprefix("auditor/rules/") for n in names if n.startswith("auditor/rules/")}
    repo_rules = {p.relative_to(REPO / "rules").as_posix() for p in (REPO / "rules").rglob("*.toml")}
    assert repo_rules and repo_rules <= shipped_rules
    assert "auditor/report/schema/report.schema.json" in names
    assert {"auditor/fix/apply.py", "auditor/rules/fixes/cuda.toml"} <= names   # rocm-audit fix and its data
    assert any(n.startswith("auditor/example/") and n.endswith(".cu") for n in names)
    assert {"auditor/report/templates/report.html.j2", "auditor/report/templates/report.css", "auditor/report/templates/report.js"} <= names


def _files(folder: Path) -> set[Path]:
    return {p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


def test_the_build_configuration_names_every_package_and_data_file_the_wheel_must_hold():
    """What the wheel holds is what pyproject's [tool.setuptools] names: every package of auditor/ (a folder with an
    __init__.py, the bundled example aside) and every file that is not a module (rules, schemas, templates, the
    example) under a package-data pattern of its package."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    example = REPO / "auditor" / "example"
    packages = {".".join(p.parent.relative_to(REPO).parts) for p in (REPO / "auditor").rglob("__init__.py")
                if example not in p.parents}
    assert set(config["packages"]) == packages | {"auditor.rules"}
    folders = {name: REPO / config.get("package-dir", {}).get(name, name.replace(".", "/"))
               for name in config["packages"]}
    shipped = {path for name, patterns in config["package-data"].items() for pattern in patterns
               for path in folders[name].glob(pattern) if path.is_file()}
    modules = {p for name in config["packages"] for p in folders[name].glob("*.py")}
    data = (_files(REPO / "auditor") | _files(REPO / "rules")) - modules
    assert data and data <= shipped, sorted(str(p.relative_to(REPO)) for p in data - shipped)
    assert (REPO / "rules" / "hipify" / "api_table.tsv") in shipped and (example / "csrc" / "absmax.cu") in shipped
