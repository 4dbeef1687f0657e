"""Entry point: flags into the settings of the command given, a Report into an exit code. No analysis here."""
from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from auditor.cli.pipes import ClosedPipeQuiet
from auditor.util.errors import ToolError, safe_text  # ToolError re-exported: the tests use it
from auditor.run.invocation.judging import (change_under_review, fail_closed, scanned_root,
                                            suppression_policy, unvendored)
from auditor.run.invocation.runsetup import demo_exit
from auditor.run.invocation.runsetup import exit_code as _exit_code
from auditor.run.invocation.runsetup import files_root as _files_root
from auditor.run.invocation.runsetup import installed_api_table as _installed_api_table
from auditor.run.invocation.runsetup import rulebook_for as _rulebook
from auditor.run.invocation.runsetup import scan_options
from auditor.run.invocation.output import bundled_example, default_html_path, emit, write_atomic, write_or_print  # noqa: F401

if TYPE_CHECKING:
    from auditor.cli.commands import (
        BaselineSettings, CheckSettings, ConfigSettings, CoverageSettings, FixSettings, HistorySettings, RuleSettings,
        RulesSettings, Settings,
    )

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def main(argv: Sequence[str] | None = None) -> int:
    from auditor.cli.settings import parse_settings

    argv = sys.argv[1:] if argv is None else list(argv)
    fewer_collections()
    debug = "--debug" in argv
    _show_file_errors(debug)
    stdout = sys.stdout
    sys.stdout = ClosedPipeQuiet(stdout)   # `rocm-audit rules | head -2`: the rest is dropped, the code is kept
    try:
        if argv[:1] == ["fleet"]:
            return _fleet(argv[1:], debug)
        return _guarded(lambda: _run(parse_settings(argv)), debug)
    finally:
        sys.stdout = stdout


def fewer_collections() -> None:
    """A scan builds a syntax tree of every file, hundreds of thousands of objects that live until the file is
    done, none of them in a cycle: with the collector's default (a collection every 700 new objects) the
    collections cost a quarter of the Python parses' time. Every 20,000 instead (the workers inherit it)."""
    import gc

    _, older, oldest = gc.get_threshold()
    gc.set_threshold(20_000, older, oldest)


def _show_file_errors(debug: bool) -> None:
    """With --debug, a file's internal error (auditor/run/scan/file.py) is printed with its traceback on stderr."""
    import logging

    logger = logging.getLogger("rocm_audit")
    logger.handlers = [logging.StreamHandler(sys.stderr)] if debug else []
    logger.setLevel(logging.DEBUG if debug else logging.WARNING)
    logger.propagate = False


def _fleet(argv: list[str], debug: bool) -> int:
    """`rocm-audit fleet SOURCES…`: the portfolio of many repositories (auditor/cli/fleet/, its own flags)."""
    from auditor.cli.fleet.command import fleet_command

    return _guarded(lambda: fleet_command([a for a in argv if a != "--debug"]), debug)


def _run(settings: Settings) -> int:
    from auditor.util.deadline import Deadline

    for warning in settings.warnings:
        print(f"rocm-audit: warning: {safe_text(warning)}", file=sys.stderr)
    deadline = Deadline(settings.max_run_time).start() if settings.max_run_time else None
    try:
        return _command(settings)
    except KeyboardInterrupt:
        if deadline is not None and deadline.expired:
            raise ToolError(deadline.message()) from None
        raise
    finally:
        if deadline is not None:
            deadline.cancel()


def _command(settings: Settings) -> int:
    """The command's own function (COMMANDS, at the end of this module), given its settings."""
    return COMMANDS[settings.command](settings)


def _rules(settings: RulesSettings) -> int:
    if settings.check_pack is not None:
        from auditor.cli.rulepack import check_command

        return check_command(settings)
    return _list_rules(settings)


def _fix(settings: FixSettings) -> int:
    from auditor.fix.command import fix_command

    return fix_command(settings)


def _history(settings: HistorySettings) -> int:
    from auditor.history.command import history_command

    return history_command(settings)


def _guarded(run, debug: bool) -> int:
    """Every failure of the tool is exit 2 with one line (a traceback too with --debug); never 1, which means
    findings."""
    try:
        return run()
    except ToolError as err:   # every error of the tool's input or environment derives from it
        print(f"rocm-audit: error: {safe_text(str(err))}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("rocm-audit: interrupted", file=sys.stderr)
        return EXIT_ERROR
    except BaseException as err:  # an internal error (or a stray budget alarm) is still a tool error: exit 2
        if isinstance(err, SystemExit) and err.code in (None, 0, EXIT_ERROR):
            raise
        if debug:
            import traceback

            traceback.print_exc()
        print(f"rocm-audit: internal error: {type(err).__name__}: {safe_text(str(err))}"
              + ("" if debug else " (run with --debug for details)"), file=sys.stderr)
        return EXIT_ERROR


def _coverage(settings: CoverageSettings) -> int:
    """`rocm-audit coverage [PATH…]`: the HIPIFY coverage section alone; `--table-info`: the table's sources."""
    if settings.table_info:
        from auditor.match.hipify.apitable import shipped_table

        table = _installed_api_table(settings.rules.hipify_perl) or shipped_table()
        print("\n".join(table.describe()))
        return EXIT_CLEAN
    from rich.console import Console

    from auditor.run.pipeline import audit
    from auditor.report.json import coverage_dict
    from auditor.report.terminal import render_coverage

    paths = settings.scope.paths or (Path("."),)
    for path in paths:
        if not path.exists():
            raise ToolError(f"path does not exist: {path}")
    report = audit(paths, _rulebook(settings), scan_options(settings))
    if settings.format == "json":
        import json

        write_or_print(json.dumps(coverage_dict(report.coverage), indent=2) + "\n", settings.output)
    else:
        render_coverage(report, Console(), all_names=True)
    return EXIT_CLEAN


def _check(settings: CheckSettings) -> int:
    from dataclasses import replace

    from auditor.run.gate.change import against_baseline, against_git, read_baseline, render_baseline, shrink

    gate, shown = settings.gate, settings.reporting
    rulebook = _rulebook(settings)
    paths = _example(settings) if settings.example else settings.scope.paths
    _must_exist(paths)
    options = scan_options(settings)
    change = None
    if settings.command == "check":
        change = change_under_review(gate.diff_base, gate.baseline, paths, settings.config_file)
    if change is not None and not settings.scope.include_vendored:
        options = unvendored(options, change)
    options = suppression_policy(options, gate, change)
    report, root = _scan(settings, paths, rulebook, options, gate.fail_on_verify)
    if gate.baseline:
        baseline = read_baseline(gate.baseline)
        where = gate.baseline.absolute()
        report = against_baseline(report, baseline, Path(os.path.relpath(where)) if where.is_relative_to(Path.cwd())
                                  else where)
        if gate.update_baseline:
            smaller = shrink(baseline, report)
            write_atomic(gate.baseline, render_baseline(smaller))
            removed = sum(e.count for e in baseline.entries) - sum(e.count for e in smaller.entries)
            print(safe_text(f"rocm-audit: {gate.baseline}: {removed} finding(s) no longer found removed"),
                  file=sys.stderr)
            report = replace(report, gate=replace(report.gate, gone=()) if report.gate else None)
    elif change is not None:
        report = against_git(report, change, rulebook, replace(options, suppressions=options.suppressions.at_base()))
    report = fail_closed(report, gate, settings.scope.paths, change)
    strict_fails = bool(gate.strict and report.gate and report.gate.gone)
    if strict_fails:
        report = replace(report, gate=replace(report.gate, strict=True))
    if shown.statistics:
        from auditor.report.statistics import render_statistics

        sys.stdout.write(render_statistics(report, gate.fail_on))
    else:
        from auditor.run.pipeline import REPORT
        from auditor.report.terminal.progress import phase_status

        phases = phase_status(settings.progress)
        phases(REPORT)
        try:
            emit(settings, report, root, _progress(settings, report, root, rulebook))
        finally:
            phases.stop()
    code = _exit_code(report, gate.fail_on, gate.exit_zero)
    if strict_fails and not gate.exit_zero:
        if shown.format != "terminal" or shown.output:   # the terminal summary says it already
            from auditor.report.terminal import strict_failure

            print(strict_failure(report), file=sys.stderr)
        code = EXIT_FINDINGS
    return demo_exit(code) if settings.example else code


def _progress(settings: CheckSettings, report, root, rulebook):
    """check --record appends the run to the history database; the HTML report shows the recorded progress."""
    from auditor.history.command import record_and_progress

    return record_and_progress(settings, report, root, rulebook)


def _example(settings: CheckSettings) -> tuple[Path, ...]:
    """`demo`: the example repository that ships with rocm-audit, said so on a terminal run."""
    paths = (bundled_example(),)
    if settings.reporting.format == "terminal" and not settings.reporting.quiet:
        print(f"rocm-audit demo: scanning the example repository that ships with rocm-audit ({paths[0]}).\n"
              "Run `rocm-audit check` in your project (or `rocm-audit PATH`) to scan your own.", file=sys.stderr)
    return paths


def _must_exist(paths) -> None:
    for path in paths:
        if not path.exists() and not path.is_symlink():
            raise ToolError(f"path does not exist: {path}")


def _scan(settings: CheckSettings | BaselineSettings, paths, rulebook, options, fail_on_verify: bool):
    """check's and baseline's audit of `paths`: (report, the root its paths are relative to). `settings`: the
    progress bar and the config file (files named one by one are reported relative to its directory)."""
    from dataclasses import replace

    from auditor.run.discover.files import common_root
    from auditor.run.invocation.scanning import audit_tree

    from auditor.report.terminal.progress import phase_status

    bar: list = []
    phases = phase_status(settings.progress)

    def start_progress(total: int, total_bytes: int):
        if not settings.progress or total < 50 or not sys.stderr.isatty():
            return None
        from auditor.report.terminal.progress import ProgressBar

        phases.pause()
        bar.append(ProgressBar(total, total_bytes))
        return bar[0]

    root = _files_root(paths, settings.config_file)
    shown_root = None if root is None else (os.path.relpath(root) if root.is_relative_to(Path.cwd()) else str(root))
    try:
        report = audit_tree(paths, rulebook, options, shown_root=shown_root, progress=start_progress, root=root,
                            phase=phases.after(bar))
    finally:
        for shown in bar:
            shown.stop()
        phases.stop()
    root = root or common_root(paths)
    return replace(report, repo_prefix=_repo_prefix(root), fail_on_verify=fail_on_verify), root


def _repo_prefix(root: Path) -> str:
    from auditor.config import project_root

    top = project_root(root)
    if top is None:
        return ""
    prefix = root.resolve().relative_to(top.resolve()).as_posix()
    return "" if prefix == "." else prefix


def _write_baseline(settings: BaselineSettings) -> int:
    """`rocm-audit baseline PATH`: every unguarded finding becomes known (reasons already written are kept)."""
    from auditor.run.gate.change import BASELINE_FILE, GateError, baseline_from, read_baseline, render_baseline

    rulebook = _rulebook(settings)
    _must_exist(settings.scope.paths)
    target = settings.output or settings.baseline or (scanned_root(settings.scope.paths, settings.config_file)
                                                      / BASELINE_FILE)
    options = scan_options(settings)
    if not settings.scope.include_vendored:   # what `check --baseline` will see: the same directories
        options = unvendored(options, change_under_review(None, target, settings.scope.paths, settings.config_file))
    report, root = _scan(settings, settings.scope.paths, rulebook, options, settings.fail_on_verify)
    previous = None
    if target.exists():
        try:
            previous = read_baseline(target)
        except GateError as err:
            print(safe_text(f"rocm-audit: replacing an unreadable baseline ({err})"), file=sys.stderr)
    from auditor.cli.basesettings import record_of

    baseline = baseline_from(report, previous, record_of(settings.sources))
    write_atomic(target, render_baseline(baseline))
    total = sum(e.count for e in baseline.entries)
    files = f"{len(report.results)} file{'' if len(report.results) == 1 else 's'}"
    print(safe_text(f"rocm-audit: wrote {target}: {total} known finding(s) in {len(baseline.entries)} entries "
                    f"({files} scanned)"))
    return EXIT_CLEAN


def _show_config(settings: ConfigSettings) -> int:
    from auditor.config import describe

    from auditor.util.escape import log_lines

    sys.stdout.write(log_lines(describe(settings.sources, settings.config_file, settings.config_start or Path.cwd())))
    return EXIT_CLEAN



def _list_rules(settings: RulesSettings) -> int:
    """One line a rule (id, category, severity, name); `--category` narrows it, `--json` prints it as data."""
    import json

    from rich.console import Console
    from rich.table import Table

    from auditor.types import CATEGORIES

    rules = _rulebook(settings).rules
    if settings.category:
        if settings.category not in CATEGORIES:
            raise ToolError(f"unknown category {settings.category!r} (one of: {', '.join(CATEGORIES)})")
        rules = [r for r in rules if r.category == settings.category]
    if settings.rules_json:
        sys.stdout.write(json.dumps([
            {"id": r.id, "name": r.name, "category": r.category, "severity": r.severity.label, "effort": r.effort,
             "message": r.message, "rocm_alternative": r.rocm_alternative} for r in rules], indent=2) + "\n")
        return EXIT_CLEAN
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    for column in ("id", "category", "severity", "name"):
        table.add_column(column, no_wrap=True, overflow="ellipsis")
    for rule in rules:
        table.add_row(rule.id, rule.category, rule.severity.label, rule.name)
    console = Console()
    console.print(table)
    console.print(f"{len(rules)} rules · rocm-audit rule ID explains one · --category CAT, --json", style="dim",
                  highlight=False)
    return EXIT_CLEAN


def _explain_rule(settings: RuleSettings) -> int:
    from auditor.cli.rulepage import rule_page
    from auditor.fix.data import shipped_fixes
    from auditor.util.escape import log_lines

    rulebook = _rulebook(settings)
    rule = rulebook.by_id().get(settings.rule_id)
    if rule is None:
        by_name = {r.name: r for r in rulebook.rules}
        rule = by_name.get(settings.rule_id.lower())
    if rule is None:
        raise ToolError(f"no rule {settings.rule_id!r} (rocm-audit rules lists them)")
    # The page is Markdown, printed as it is (as `ruff rule` does): the same text as docs/rules/RAnnn.md
    sys.stdout.write(log_lines(rule_page(rule, shipped_fixes().get(rule.id))))
    return EXIT_CLEAN


COMMANDS: dict[str, Callable[[Any], int]] = {   # each takes its command's settings (cli/commands.py)
    "check": _check, "demo": _check, "rules": _rules, "rule": _explain_rule, "config": _show_config,
    "baseline": _write_baseline, "coverage": _coverage, "fix": _fix, "history": _history,
}
