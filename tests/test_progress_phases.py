"""A long run never goes quiet: the steps before and after the scan's bar are named (discovering, build model,
analysis, report) on standard error, and never in a quiet (pre-commit) run."""
import io
import sys

from rich.console import Console

from auditor.cli.app import main
from auditor.run.pipeline import PHASES, audit
from auditor.report.terminal.progress import PhaseStatus
from auditor.match.rulebook import load_rulebook
from tests.conftest import FIXTURES


def test_audit_names_each_step_around_the_scan_in_order():
    told = []
    audit([FIXTURES / "llm_serving"], load_rulebook(), phase=told.append)
    assert told == ["discovering", "build model", "analysis"] == list(PHASES[:3])


def test_phase_status_writes_the_step_to_its_console():
    out = io.StringIO()
    status = PhaseStatus(Console(file=out, force_terminal=True, width=80))
    for phase in ("build model", "analysis"):
        status(phase)
        status.pause()          # as the scan's bar takes the line
        assert f"rocm-audit: {phase} …" in out.getvalue()
    status.stop()


def test_a_run_without_progress_names_no_step():
    out = io.StringIO()
    status = PhaseStatus(Console(file=out, force_terminal=True, width=80), on=False)
    status("analysis")
    status.stop()
    assert out.getvalue() == ""


def test_quiet_runs_name_no_step_even_on_a_terminal(monkeypatch, capsys):
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    main([str(FIXTURES / "llm_serving"), "-q", "--no-html"])
    captured = capsys.readouterr()
    assert not any(phase in captured.err + captured.out for phase in ("discovering …", "build model", "analysis …"))
