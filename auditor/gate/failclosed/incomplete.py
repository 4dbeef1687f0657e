"""Which files that could not be scanned completely fail the run.

*Partial* files (a Python file scanned past a bad line, a C++ tree with ERROR nodes, text decoded as Latin-1)
count as scanned: their findings are reported and the report names them. *Incomplete* ones (unreadable, over
the size cap or the time budget, a worker that died, Python of which only the imports could be read) fail the
run the way a finding at the --fail-on threshold does, unless the invocation allows it (--allow-partial, or
the user's own --config; never a config file in the scanned tree). Under --diff-base, as for findings, only
the files the change touches count: one left unscanned before the change is known, not new.
"""
from __future__ import annotations

from auditor.types import Report, Severity

NOTHING_TO_SCAN = ("dangling symbolic link",)   # discovery notes that name no content


def failing_unscanned(report: Report, fail_on: Severity | None, allow_partial: bool) -> tuple[tuple[str, str], ...]:
    if fail_on is None or allow_partial:
        return ()
    gate = report.gate
    changed = set(gate.changed_paths) if gate is not None and gate.mode == "diff-base" else None
    results = {r.path for r in report.results}
    out = []
    for path, why in report.errors:
        if why in NOTHING_TO_SCAN:
            continue
        if changed is not None and path in results and path not in changed:
            continue
        out.append((path, why))
    return tuple(out)


def unscanned_line(path: str, why: str) -> str:
    """The one sentence every report format uses for a file that fails the run unscanned."""
    return (f"{path}: not scanned completely ({why}); this fails the run like a finding "
            "(--allow-partial accepts it)")


def closed_failures(report: Report) -> list[tuple[str, str]]:
    """(path, sentence) for everything that fails the run besides findings, as every report format words it."""
    out = [(path, unscanned_line(path, why)) for path, why in report.unscanned]
    out += [(where, f"{where}: {what}") for where, what in report.gate_findings]
    return out
