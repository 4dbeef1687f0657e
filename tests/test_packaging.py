"""The rules and the bundled example ship inside the wheel (read through importlib.resources)."""
import subprocess
import sys
import zipfile

from tests.conftest import REPO


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
