"""`rocm-audit fix PATH… [--diff] [--unsafe]` (and `check --fix`): run the fixes, write or show them, summarise,
and exit as `check` would on the tree as the command leaves it."""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from collections import Counter

from auditor.util.escape import log_lines, visible
from auditor.fix.apply import run_fix, unified_diff, write_all
from auditor.fix.outcome import FixRun


def fix_command(settings) -> int:
    from auditor.run.invocation.runsetup import exit_code, files_root, rulebook_for, scan_options
    from auditor.util.errors import ToolError
    from auditor.fix.data import FixDataError, shipped_fixes

    paths = settings.scope.paths
    for path in paths:
        if not path.exists():
            raise ToolError(f"path does not exist: {path}")
        if link := linked_component(path):
            raise ToolError(f"{path} passes through a symbolic link ({link}): fix writes only inside the tree the "
                            "path names; run it on the link's target instead")
    try:
        specs = shipped_fixes()
    except FixDataError as err:
        raise ToolError(f"fix files: {err}") from None
    rulebook = rulebook_for(settings)
    specs = {rule: spec for rule, spec in specs.items() if rule in rulebook.by_id()}   # --select/--ignore
    run = run_fix(paths, rulebook, specs, scan_options(settings), settings.unsafe,
                  root=files_root(paths, settings.config_file))
    verified = ""
    if settings.verify:
        from auditor.fix.compilers import verify_run

        run, verified = verify_run(run, settings.keep_unchecked)
    if settings.diff:
        for outcome in run.files:
            if outcome.changed:
                sys.stdout.write(unified_diff(outcome))
    else:
        run = write_all(run, paths, rulebook, scan_options(settings))
    print(log_lines(summary(run, settings.diff) + (verified + "\n" if verified else "")),
          file=sys.stderr if settings.diff else sys.stdout, end="")
    return exit_code(run.before if settings.diff else run.after, settings.fail_on)


def linked_component(path: Path) -> str | None:
    """The first directory on the path as typed that is a symbolic link (a relative path from the current
    directory), or None. A file reached through one lies outside the tree the path names."""
    parts = Path(os.path.normpath(path)).parts
    current = Path(parts[0]) if parts else Path(".")
    for index, part in enumerate(parts[1:], start=2):
        current = current / part
        if current.is_symlink() and (index < len(parts) or current.is_dir()):   # a linked file: plan refuses it
            return str(current)
    return None


LISTED = 30   # not-fixed sites listed one by one up to this many; beyond it, counted by reason


def _general(reason: str) -> str:
    """The reason without its line number, so that sites group."""
    return re.sub(r" \(line \d+\)|, line \d+", "", reason)


def summary(run: FixRun, diff: bool) -> str:
    verb = "Would fix" if diff else "Fixed"
    changed = [o for o in run.files if o.changed and (o.applied or o.path != run.home)]
    lines = [f"{verb} {run.applied} finding(s) in {len(changed)} file(s)."]
    lines += [f"  {visible(o.path)} ({'new: ' if o.created else ''}{o.note}, included by the fixed files)"
              for o in run.files if o.changed and o.path == run.home and not o.applied]
    for outcome in changed:
        by_rule = Counter(f.rule_id for f in outcome.applied)
        made = f" (new: the ROCm variant of {visible(outcome.beside)}, which stays as it is)" if outcome.beside else ""
        note = outcome.note if not outcome.beside else (outcome.note or "").replace("new file", "").strip("; ")
        lines.append(f"  {visible(outcome.path)}{made}: " + ", ".join(f"{rule} x{n}" for rule, n in
                                                                     sorted(by_rule.items()))
                     + (f" ({note})" if note else ""))
    for outcome in run.files:
        if outcome.rolled_back:
            lines.append(f"  {visible(outcome.path)}: left unchanged: {visible(outcome.rolled_back)}")
    not_fixed = [(f, reason) for o in run.files for f, reason in o.skipped] + list(run.refused)
    if not_fixed:
        lines.append(f"Not fixed ({len(not_fixed)}), reported only:")
        if len(not_fixed) <= LISTED:
            lines += [f"  {visible(f.path)}:{f.span.line}: {f.rule_id} {visible(reason)}" for f, reason in sorted(
                not_fixed, key=lambda item: item[0].sort_key())]
        else:   # thousands of sites in generated files would bury the rest: count them by reason
            by_reason = Counter((f.rule_id, _general(reason)) for f, reason in not_fixed)
            lines += [f"  {n} x {rule} {reason}"
                      for (rule, reason), n in sorted(by_reason.items(), key=lambda i: -i[1])]
    if run.unsafe_left:
        lines.append(f"{run.unsafe_left} more finding(s) have a fix that needs review: add --unsafe.")
    report = run.before if diff else run.after
    state = "now" if diff else "after fixing"
    lines.append(f"Remaining {state}: {len(report.gated())} finding(s) would break on ROCm, as rocm-audit check "
                 "counts them (it lists them).")
    if report.verdict == "blocked":   # fixes that compile on ROCm do not make a blocked project build there
        lines += [f"Verdict {state}: {visible(report.verdict_reason)}",
                  "  No fix ports the code that blocks it: the ROCm build needs that code replaced first."]
    return "\n".join(lines) + "\n"


