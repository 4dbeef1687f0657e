"""What every scanning command sets up from its settings before it scans, shared by `check`, `baseline`,
`coverage` and `fix`: the rulebook (shipped or with the user's packs, selected, with an installed HIPIFY table),
the scan options and cache directory, the root paths are reported against, and the exit code of a report."""
from __future__ import annotations

import sys
from pathlib import Path

from auditor.util.errors import ToolError

EXIT_CLEAN, EXIT_FINDINGS = 0, 1


def rulebook_for(settings):
    """The rulebook of a command's settings (its RuleChoice, Cache and sources; cli/settings.py)."""
    from auditor.run.runner.cache import cached_rulebook
    from auditor.judge.analysis.policy import unknown_selectors
    from auditor.match.rulebook.schema import RuleError

    choice = settings.rules
    try:
        if choice.rule_packs:   # the user's own rules: read as given, not from the cache
            from auditor.match.rulebook import load_rulebook

            everything = load_rulebook(packs=choice.rule_packs)
        else:
            everything = cached_rulebook(cache_dir_for(settings.cache))
    except RuleError as err:
        raise ToolError(f"rule files: {err}") from None
    check_rule_patterns(everything, choice, settings.sources)
    rulebook = everything.select(choice.select, choice.ignore)
    if unknown := unknown_selectors(everything, choice.per_file_ignores):
        raise ToolError(f"per-file-ignores: no rule matches {', '.join(map(repr, unknown))} "
                        "(rocm-audit rules lists them)")
    table = installed_api_table(choice.hipify_perl)
    return rulebook if table is None else rulebook.with_api_table(table)


def check_rule_patterns(rulebook, choice, sources) -> None:
    """A --select/--ignore value (or config select/ignore) that names no rule is a mistake, not an empty set:
    `--select RA3O1` would otherwise turn the gate off."""
    from auditor.match.rulebook import id_matches

    where_set = {name: source for name, _value, source in sources}
    for flag, patterns in (("select", choice.select), ("ignore", choice.ignore)):
        for pattern in patterns:
            if not any(id_matches(rule, pattern) for rule in rulebook.rules):
                where = where_set.get(flag, "command line")
                raise ToolError(f"--{flag} {pattern!r} ({where}): no rule id, prefix or name matches it "
                                "(rocm-audit rules lists them)")


def installed_api_table(hipify_perl: Path | None):
    """An installed hipify-perl's tables (--hipify-perl PATH, else on PATH), or None for the shipped table."""
    from auditor.match.hipify.perl import HipifyPerlError, installed_table

    try:
        return installed_table(hipify_perl)
    except HipifyPerlError as err:
        raise ToolError(str(err)) from None


def scan_options(settings):
    """The pipeline's ScanOptions from a scanning command's settings (its Scope, RuleChoice and Cache)."""
    from auditor.run.pipeline import ScanOptions

    scope = settings.scope
    return ScanOptions(scope.exclude, scope.force_exclude, scope.include_vendored, scope.jobs, scope.max_file_size,
                       scope.time_budget, cache_dir_for(settings.cache), settings.rules.per_file_ignores,
                       scope.optional_dirs, worker_memory=scope.worker_memory)


def cache_dir_for(cache) -> Path | None:
    """The cache directory of this run, or None (--no-cache; or the default one lies in a scanned path)."""
    from auditor.run.runner.cache import cache_directory

    return cache_directory(cache.no_cache, cache.cache_dir, cache.scanned)


def files_root(paths, config_file: Path | None) -> Path | None:
    """Files named one by one (the pre-commit hook) are reported relative to their repository (or config
    file's directory), so that paths and fingerprints are the same as in a scan of the whole tree."""
    from auditor.config import project_root
    from auditor.run.discover.files import common_root

    if not paths or any(p.is_dir() for p in paths):
        return None
    common = common_root(paths)
    top = project_root(common) or (config_file.parent.absolute() if config_file else None)
    return top.resolve() if top and common.is_relative_to(top.resolve()) else None


def exit_code(report, fail_on, exit_zero: bool = False) -> int:
    """1 when a finding that would break on ROCm (Report.failing, the one definition) reaches `fail_on`, or when the
    run fails closed (auditor/failclosed: files not scanned completely, gate settings weakened by the change; both
    are set only when the run fails at some threshold); 0 with --exit-zero whatever was found (a tool error is
    still 2, raised before this)."""
    if exit_zero:
        return EXIT_CLEAN
    fails_closed = bool(report.unscanned or report.gate_findings)
    return EXIT_FINDINGS if report.failing(fail_on) or fails_closed else EXIT_CLEAN


def demo_exit(check_code: int) -> int:
    """`demo` shows what `check` does and succeeds (a `set -e` script or a first try goes on); it says what
    `check` would have exited with."""
    meaning = "findings at or above --fail-on would break on ROCm" if check_code == EXIT_FINDINGS else "clean"
    print(f"rocm-audit demo: exit 0; `rocm-audit check` on this tree would exit {check_code} ({meaning})",
          file=sys.stderr)
    return 0
