import json
from pathlib import Path

import pytest

from auditor.cli import main

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"


def write_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


@pytest.fixture
def run_json(capsys):
    """Run the CLI with --format json; return (exit code, parsed report)."""

    def run(*args: str) -> tuple[int, dict]:
        code = main([*map(str, args), "--format", "json", "--no-progress", "-j", "1"])
        out = capsys.readouterr().out
        return code, json.loads(out) if out.strip() else {}

    return run
