"""Render the sample reports in reports/ from the fixtures (a test fails when they are stale).

    .venv/bin/python scripts/render_reports.py
"""
import io
import sys
from pathlib import Path

from rich.console import Console

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from scripts.pin_fixtures import FIXTURES  # noqa: E402


def render(name: str, path: Path) -> dict[str, str]:
    """The report files for one fixture: {file name: text}."""
    from auditor.run.pipeline import audit
    from auditor.report.html import render_html
    from auditor.report.json import render_json
    from auditor.report.markdown import render_markdown
    from auditor.report.terminal import render_terminal
    from auditor.match.rulebook import load_rulebook

    report = audit([path], load_rulebook(), shown_root=path.relative_to(REPO).as_posix())
    buffer = io.StringIO()
    render_terminal(report, Console(file=buffer, width=110, color_system=None))
    return {f"{name}.json": render_json(report), f"{name}.txt": buffer.getvalue(),
            f"{name}.md": render_markdown(report), f"{name}.html": render_html(report, path)}


def main() -> None:
    out = REPO / "reports"
    out.mkdir(exist_ok=True)
    for name, path in FIXTURES.items():
        for file_name, text in render(name, path).items():
            (out / file_name).write_text(text, encoding="utf-8")
            print(f"reports/{file_name}")


if __name__ == "__main__":
    main()
