"""Entry point: flags into Settings, a Report into an exit code. No analysis here."""
from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


class ToolError(Exception):
    """A problem with the tool's input or environment (not with the scanned code): exit 2."""


def main(argv: Sequence[str] | None = None) -> int:
    from auditor.settings import UsageError, parse_settings

    argv = sys.argv[1:] if argv is None else list(argv)
    debug = "--debug" in argv
    try:
        settings = parse_settings(argv)
        if settings.command == "rules":
            return _list_rules(settings)
        if settings.command == "rule":
            return _explain_rule(settings)
        return _check(settings)
    except (UsageError, ToolError) as err:
        print(f"rocm-audit: error: {err}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("rocm-audit: interrupted", file=sys.stderr)
        return EXIT_ERROR
    except Exception as err:  # an internal error is still a tool error: exit 2, one line unless --debug
        if debug:
            raise
        print(f"rocm-audit: internal error: {type(err).__name__}: {err} (run with --debug for details)",
              file=sys.stderr)
        return EXIT_ERROR


def _rulebook(settings):
    from auditor.rulebook import RuleError, load_rulebook

    try:
        return load_rulebook().select(settings.select, settings.ignore)
    except RuleError as err:
        raise ToolError(f"rule files: {err}") from None


def bundled_example() -> Path:
    import importlib.resources

    return Path(str(importlib.resources.files("auditor") / "example"))


def _check(settings) -> int:
    from auditor.pipeline import ScanOptions, audit

    paths = settings.paths
    if settings.example:
        paths = (bundled_example(),)
        if settings.format == "terminal" and not settings.quiet:
            print(f"rocm-audit: no path given; scanning the bundled example repository ({paths[0]}).\n"
                  "Run `rocm-audit PATH` to scan your own.", file=sys.stderr)
    for path in paths:
        if not path.exists() and not path.is_symlink():
            raise ToolError(f"path does not exist: {path}")
    options = ScanOptions(settings.exclude, settings.force_exclude, settings.include_vendored, settings.jobs,
                          settings.max_file_size)
    bar: list[_Progress] = []

    def start_progress(total: int):
        if not settings.progress or settings.quiet or total < 50 or not sys.stderr.isatty():
            return None
        bar.append(_Progress(total))
        return bar[0].advance

    try:
        report = audit(paths, _rulebook(settings), options, progress=start_progress)
    finally:
        for shown in bar:
            shown.stop()
    _emit(settings, report)
    return _exit_code(report, settings.fail_on)


def _exit_code(report, fail_on) -> int:
    if fail_on is None:
        return EXIT_CLEAN
    failing = [f for f in report.findings if not f.guarded and f.severity >= fail_on]
    return EXIT_FINDINGS if failing else EXIT_CLEAN


def _emit(settings, report) -> None:
    if settings.format == "json":
        from auditor.report.json import render_json

        _write_or_print(render_json(report), settings.output)
        return
    from rich.console import Console

    from auditor.report.terminal import render_terminal

    if settings.output:
        import io

        buffer = io.StringIO()
        render_terminal(report, Console(file=buffer, width=120, color_system=None), settings.quiet)
        _write_or_print(buffer.getvalue(), settings.output)
    else:
        render_terminal(report, Console(), settings.quiet)


def _write_or_print(text: str, output: Path | None) -> None:
    if output is None:
        sys.stdout.write(text)
        return
    write_atomic(output, text)


def write_atomic(path: Path, text: str) -> None:
    """Write through a temporary file in the same directory, so readers never see half a report."""
    directory = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=directory)
    except OSError as err:
        raise ToolError(f"cannot write {path}: {err.strerror or err}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except OSError as err:
        Path(tmp).unlink(missing_ok=True)
        raise ToolError(f"cannot write {path}: {err.strerror or err}") from None


class _Progress:
    def __init__(self, total: int):
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self._progress = Progress(
            TextColumn("scanning"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            console=Console(stderr=True), transient=True,
        )
        self._task = self._progress.add_task("scan", total=total)
        self._progress.start()

    def advance(self, n: int) -> None:
        self._progress.advance(self._task, n)

    def stop(self) -> None:
        self._progress.stop()


def _list_rules(settings) -> int:
    from rich.console import Console
    from rich.table import Table

    rulebook = _rulebook(settings)
    table = Table(title=f"{len(rulebook.rules)} rules")
    for column in ("id", "name", "category", "severity", "effort", "message"):
        table.add_column(column, overflow="fold")
    for rule in rulebook.rules:
        table.add_row(rule.id, rule.name, rule.category, rule.severity.label, rule.effort, rule.message)
    Console().print(table)
    return EXIT_CLEAN


def _explain_rule(settings) -> int:
    from rich.console import Console

    rulebook = _rulebook(settings)
    rule = rulebook.by_id().get(settings.rule_id or "")
    if rule is None:
        by_name = {r.name: r for r in rulebook.rules}
        rule = by_name.get((settings.rule_id or "").lower())
    if rule is None:
        raise ToolError(f"no rule {settings.rule_id!r} (rocm-audit rules lists them)")
    console = Console()
    console.print(f"[bold]{rule.id} {rule.name}[/bold]  {rule.category} · {rule.severity.label} · effort {rule.effort}")
    console.print(rule.message, markup=False)
    if rule.rocm_alternative:
        console.print(f"ROCm alternative: {rule.rocm_alternative}", markup=False)
    console.print()
    for paragraph in rule.docs.split("\n\n"):  # the docs are wrapped for the TOML file, not the terminal
        console.print(" ".join(paragraph.split()), markup=False, highlight=False)
        console.print()
    for label, examples in (("Reported", rule.flag), ("Not reported", rule.ok)):
        console.print(f"[bold]{label}:[/bold]")
        for example in examples:
            console.print(f"  # {example.file}", style="dim", markup=False)
            for line in example.code.rstrip().splitlines():
                console.print(f"  {line}", markup=False, highlight=False)
    return EXIT_CLEAN
