"""Which files that could not be scanned completely fail the run.

*Partial* files (a Python file scanned past a bad line, a C++ tree with ERROR nodes, text decoded as Latin-1)
count as scanned: their findings are reported and the report names them. *Incomplete* ones (unreadable, over
the size cap or the time budget, a worker that died, Python of which only the imports could be read) fail the
run the way a finding at the --fail-on threshold does, unless the invocation allows it (--allow-partial, or
the user's own --config; never a config file in the scanned tree). Under --diff-base, as for findings, only
the files the change touches count: one left unscanned before the change is known, not new; and lines the change
adds to a partial C/C++ file that no parse could read fail it when they hold words of a rule at the threshold.
"""
from __future__ import annotations

from auditor.types import Report, Severity

NOTHING_TO_SCAN = ("dangling symbolic link",)   # discovery notes that name no content


def failing_unscanned(report: Report, fail_on: Severity | None, allow_partial: bool,
                      unread_added: tuple[tuple[str, int, str], ...] = ()) -> tuple[tuple[str, str], ...]:
    """`unread_added`: (path, line, rule) of lines the change adds that no parse read, with that rule's words
    (run/gate/changeset.unread_added; without a gate every line is the change's)."""
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
    return tuple(out) + _hidden_by_the_change(report, fail_on, unread_added)


def _hidden_by_the_change(report: Report, fail_on: Severity,
                          unread_added: tuple[tuple[str, int, str], ...]) -> tuple[tuple[str, str], ...]:
    """Lines a change adds that no parse could read (a C/C++ syntax error swallowing what follows)
    and that hold words of a rule at the threshold: what they hide is hidden from every rule, so they fail the
    run like a file that could not be scanned. Lines the change did not add stay *partial*: they were there."""
    worst: dict[tuple[str, int], list[str]] = {}
    for path, line, rule_id in unread_added:
        rule = report.rules.get(rule_id)
        if rule is not None and rule.severity >= fail_on:
            worst.setdefault((path, line), []).append(f"{rule_id} {rule.name}")
    return tuple((path, (f"syntax errors from line {line} leave code the change adds unread, with words of "
                         f"{', '.join(names[:3])}{' and more' if len(names) > 3 else ''}; make it parse"))
                 for (path, line), names in sorted(worst.items()))


def unscanned_line(path: str, why: str) -> str:
    """The one sentence every report format uses for a file that fails the run unscanned."""
    return (f"{path}: not scanned completely ({why}); this fails the run like a finding "
            "(--allow-partial accepts it)")


def closed_failures(report: Report) -> list[tuple[str, str]]:
    """(path, sentence) for everything that fails the run besides findings, as every report format words it."""
    out = [(path, unscanned_line(path, why)) for path, why in report.unscanned]
    out += [(where, f"{where}: {what}") for where, what in report.gate_findings]
    return out
