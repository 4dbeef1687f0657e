"""What `check` adds to the findings when it judges a run (auditor/run/gate/failclosed): the change under review (one
answer for every gate mode, auditor/run/gate/changeset.py), what fails closed, and the vendored-looking directories the
change adds, which are scanned."""
from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

from auditor.util.errors import safe_text


def scanned_root(paths: tuple[Path, ...], config_file: Path | None) -> Path:
    """The root the report names files from (files named one by one: their repository's top)."""
    from auditor.run.discover.files import common_root
    from auditor.run.invocation.runsetup import files_root

    paths = paths or (Path("."),)
    return files_root(paths, config_file) or common_root(paths)


def change_under_review(diff_base: str | None, baseline: Path | None, paths: tuple[Path, ...],
                        config_file: Path | None):
    """The change a gated run judges (run/gate/changeset.Change): since the merge-base under --diff-base (with or
    without --baseline), since the baseline's commit under --baseline alone; None when nothing is gated."""
    from auditor.run.gate.changeset import since_baseline, since_merge_base

    root = scanned_root(paths, config_file)
    if diff_base:
        return since_merge_base(root, diff_base)
    if baseline:
        return since_baseline(root, baseline)
    return None


def fail_closed(report, gate, paths: tuple[Path, ...], change=None):
    """What fails this run besides findings: files not scanned completely, lines the change adds that no parse
    read and submodules it adds that the project uses (under every gate mode, from `change`), gate settings a
    config in the tree changed from the baseline's record, a baseline the change grew. `gate`: the run's Gate
    (cli/concerns.py); `paths`: the paths scanned."""
    from auditor.run.gate.changeset import EVERYTHING, scanned_part, unread_added
    from auditor.judge.incomplete import failing_unscanned

    # no gate: every line is the run's own (the hooks without a baseline gate every finding)
    part = scanned_part(change if change is not None else EVERYTHING, {r.path for r in report.results})
    unread = unread_added(report, part)
    if report.gate is not None:
        report = replace(report, gate=replace(report.gate, unread_added=unread))
    findings = gate.gate_findings + _submodules_added(report, change)
    if gate.baseline and gate.diff_base:
        from auditor.run.discover.files import common_root
        from auditor.run.gate.failclosed.baselinerecord import grown

        findings += grown(common_root(paths or (Path("."),)), gate.diff_base, gate.baseline)
    return replace(report, unscanned=failing_unscanned(report, gate.fail_on, gate.allow_partial, unread),
                   gate_findings=findings if gate.fail_on is not None else ())


def _submodules_added(report, change) -> tuple[tuple[str, str], ...]:
    """Submodules the change adds: the ones the project's files use fail the run, the others are noted."""
    from auditor.run.gate.failclosed.submodules import new_submodules

    found = new_submodules(report, change)
    for note in found.notes:
        print(f"rocm-audit: note: {safe_text(note)}", file=sys.stderr)
    return found.included


def unvendored(options, change):
    """Every gate mode: directories named like vendored code that the change adds are scanned."""
    from auditor.run.gate.failclosed.vendoring import new_vendored_dirs

    found = new_vendored_dirs(change)
    for note in found.notes:
        print(f"rocm-audit: note: {safe_text(note)}", file=sys.stderr)
    return replace(options, scan_dirs=tuple(sorted(found.scanned)))


def suppression_policy(options, gate, change):
    """Which inline suppressions the run honours: none under --no-inline-suppressions; under a gate mode (`change`,
    run/gate/changeset.py), none on a line the change adds unless the (base's) config allows new ones
    (docs/suppressions.md)."""
    from auditor.match.suppress import SuppressionPolicy

    if not gate.inline_suppressions:
        return replace(options, suppressions=SuppressionPolicy(inline=False))
    if change is None or change.everything or gate.allow_new_suppressions:
        return options
    from auditor.run.gate.added import lines_added

    added = lines_added(change)
    frozen = tuple(sorted((path, None if lines is None else tuple(sorted(lines))) for path, lines in added.items()))
    return replace(options, suppressions=SuppressionPolicy(added=frozen))

