"""Rewrite tests/pinned/*.txt from the current scanner output (review the diff against EXPECTED.md).

    .venv/bin/python scripts/pin_fixtures.py
"""
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FIXTURES = {p.name: p for p in sorted((REPO / "fixtures").iterdir()) if (p / "EXPECTED.md").exists()}
FIXTURES["example"] = REPO / "auditor" / "example"


def pinned_lines(report: dict) -> list[str]:
    return [
        f"{f['path']}:{f['line']} {f['rule']} {f['severity']}{' guarded' if f['guarded'] else ''}"
        for f in report["findings"]
    ]


def main() -> None:
    for name, path in FIXTURES.items():
        done = subprocess.run(
            [sys.executable, "-m", "auditor", str(path), "--format", "json", "--fail-on", "never", "-j", "1"],
            capture_output=True, text=True, check=True,
        )
        lines = pinned_lines(json.loads(done.stdout))
        (REPO / "tests" / "pinned" / f"{name}.txt").write_text("\n".join(lines) + "\n")
        print(f"{name}: {len(lines)} findings")


if __name__ == "__main__":
    main()
