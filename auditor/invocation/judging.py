"""What `check` adds to the findings when it judges a run (auditor/gate/failclosed): what fails closed, and the
vendored-looking directories a `--diff-base` change adds, which are scanned."""
from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

from auditor.util.errors import safe_text


def fail_closed(report, gate, paths: tuple[Path, ...]):
    """What fails this run besides findings: files not scanned completely, gate settings a config in the tree
    changed from the baseline's record, a baseline the change grew. `gate`: the run's Gate
    (commandline/concerns.py); `paths`: the paths scanned."""
    from auditor.gate.failclosed.incomplete import failing_unscanned

    findings = gate.gate_findings
    if gate.baseline and gate.diff_base:
        from auditor.discover.files import common_root
        from auditor.gate.failclosed.baselinerecord import grown

        findings += grown(common_root(paths or (Path("."),)), gate.diff_base, gate.baseline)
    return replace(report, unscanned=failing_unscanned(report, gate.fail_on, gate.allow_partial),
                   gate_findings=findings if gate.fail_on is not None else ())


def unvendored(options, paths, ref: str):
    """--diff-base: directories named like vendored code that the change adds are scanned."""
    from auditor.discover.files import common_root
    from auditor.gate.failclosed.vendoring import new_vendored_dirs

    found = new_vendored_dirs(common_root(paths), ref)
    for note in found.notes:
        print(f"rocm-audit: note: {safe_text(note)}", file=sys.stderr)
    return replace(options, scan_dirs=tuple(sorted(found.scanned)))


def suppression_policy(options, gate, paths):
    """Which inline suppressions the run honours: none under --no-inline-suppressions; under --diff-base, none
    on a line the change adds unless the (base's) config allows new ones (docs/suppressions.md)."""
    from auditor.scan.suppress import SuppressionPolicy

    if not gate.inline_suppressions:
        return replace(options, suppressions=SuppressionPolicy(inline=False))
    if not gate.diff_base or gate.allow_new_suppressions:
        return options
    from auditor.discover.files import common_root
    from auditor.gate.added import lines_added

    added = lines_added(common_root(paths or (Path("."),)), gate.diff_base)
    frozen = tuple(sorted((path, None if lines is None else tuple(sorted(lines))) for path, lines in added.items()))
    return replace(options, suppressions=SuppressionPolicy(added=frozen))
