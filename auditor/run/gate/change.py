"""The CI gate: which findings are new. Against a baseline file of known findings, or against the merge-base
with a git ref (docs/gate.md). Only findings that would break on ROCm count (Report.gated: live
ones, and those to verify on hardware with --fail-on-verify); the others have a ROCm path or are not on it.

A finding is known while its fingerprint (rule, path, subject; never the line) has no more occurrences now
than were known; the extra occurrences of a fingerprint are the new ones (those on lines the branch added
first, else the last in the file).
"""
from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from auditor.run.gate.changeset import Change, scanned_part
from auditor.util.errors import ToolError
from auditor.types import Finding, Gate, Report, fingerprint

BASELINE_FILE = ".rocm-audit-baseline.json"
BASELINE_VERSION = 1
ABOUT = ("rocm-audit baseline: findings known when it was written; `rocm-audit check --baseline FILE` fails only on "
         "others. Regenerate with `rocm-audit baseline PATH`; an entry may carry a \"reason\".")
ENTRY_KEYS = ("fingerprint", "rule", "path", "subject", "count")


class GateError(ToolError):
    """A baseline that cannot be read, or a git base that cannot be used: exit 2 with one line."""


@dataclass(frozen=True, slots=True)
class Entry:
    fingerprint: str
    rule: str
    path: str
    subject: str
    count: int
    reason: str | None = None

    def sort_key(self) -> tuple:
        return (self.path, self.rule, self.subject, self.fingerprint)


@dataclass(frozen=True, slots=True)
class Baseline:
    entries: tuple[Entry, ...] = ()
    settings: dict | None = None     # the gate's settings when it was written (basesettings.from_record)

    def counts(self) -> Counter:
        return Counter({e.fingerprint: e.count for e in self.entries})


def gated(report: Report) -> list[int]:
    """Indexes of the findings the gate weighs (Report.gated: the ones that would break on ROCm)."""
    return report.gated()


# --- baseline file -----------------------------------------------------------------------------------

def read_baseline(path: Path) -> Baseline:
    """A regular file (not a link: it could point anywhere) of at most BASELINE_CAP bytes, or GateError."""
    from auditor.util.boundedio import BASELINE_CAP, UnsafeRead, read_bounded

    try:
        text = read_bounded(path, BASELINE_CAP, "baseline", follow_links=False).decode("utf-8")
    except FileNotFoundError:
        # the first run of a hook or CI job that names a baseline: say exactly what makes it (never make it here,
        # which would accept every finding of a checkout that simply lacks the file)
        raise GateError(f"{path}: no such baseline; create it with `rocm-audit baseline . -o {path}` at the top of "
                        "the repository and commit it (today's findings become known)") from None
    except UnsafeRead as err:
        raise GateError(str(err)) from None
    except (OSError, UnicodeDecodeError) as err:
        raise GateError(f"{path}: cannot read the baseline: {getattr(err, 'strerror', None) or err}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise GateError(f"{path}:{err.lineno}:{err.colno}: corrupt baseline ({err.msg}); fix it, or write a new "
                        "one with: rocm-audit baseline PATH") from None
    record = data.get("settings") if isinstance(data, dict) else None
    return Baseline(tuple(_entries(data, path)), record if isinstance(record, dict) else None)


def _entries(data: object, path: Path) -> Iterable[Entry]:
    def bad(why: str) -> GateError:
        return GateError(f"{path}: not a rocm-audit baseline: {why}")

    if not isinstance(data, dict) or not isinstance(data.get("entries"), list):
        raise bad('expected an object with an "entries" list')
    if data.get("version") != BASELINE_VERSION:
        raise bad(f"version {data.get('version')!r} (this rocm-audit reads version {BASELINE_VERSION})")
    for number, raw in enumerate(data["entries"], start=1):
        if not isinstance(raw, dict) or any(k not in raw for k in ENTRY_KEYS):
            raise bad(f"entry {number} needs {', '.join(ENTRY_KEYS)}")
        if not all(isinstance(raw[k], str) for k in ENTRY_KEYS[:4]) or not isinstance(raw["count"], int) \
                or isinstance(raw["count"], bool) or raw["count"] < 1:
            raise bad(f"entry {number} has a wrong type (strings, and a count of at least 1)")
        if fingerprint(raw["rule"], raw["path"], raw["subject"]) != raw["fingerprint"]:
            raise bad(f"entry {number} ({raw['rule']} in {raw['path']}): its fingerprint does not match its rule, "
                      "path and subject (edited by hand?)")
        reason = raw.get("reason")
        yield Entry(raw["fingerprint"], raw["rule"], raw["path"], raw["subject"], raw["count"],
                    str(reason) if reason else None)


def render_baseline(baseline: Baseline) -> str:
    """Sorted, one entry a line, no line numbers and no timestamps: a reviewable diff when it changes."""
    lines = [f'  "about": {json.dumps(ABOUT)},', f'  "version": {BASELINE_VERSION},']
    if baseline.settings is not None:
        lines.append(f'  "settings": {json.dumps(baseline.settings, sort_keys=True, ensure_ascii=False)},')
    entries = sorted(baseline.entries, key=Entry.sort_key)
    body = []
    for e in entries:
        item = {"fingerprint": e.fingerprint, "rule": e.rule, "path": e.path, "subject": e.subject, "count": e.count}
        if e.reason:
            item["reason"] = e.reason
        body.append("    " + json.dumps(item, ensure_ascii=False))
    entries_text = "[\n" + ",\n".join(body) + "\n  ]" if body else "[]"
    return "{\n" + "\n".join(lines) + f'\n  "entries": {entries_text}\n' + "}\n"


def baseline_from(report: Report, previous: Baseline | None = None, settings: dict | None = None) -> Baseline:
    """Every finding of the report that would break on ROCm, counted by fingerprint; reasons kept from `previous`;
    `settings`: the gate's settings of this run, recorded."""
    reasons = {e.fingerprint: e.reason for e in previous.entries} if previous else {}
    counts: Counter = Counter()
    first: dict[str, Finding] = {}
    for i in gated(report):
        f = report.findings[i]
        counts[f.fingerprint] += 1
        first.setdefault(f.fingerprint, f)
    return Baseline(tuple(
        Entry(fp, f.rule_id, f.path, " ".join(f.subject.split()), counts[fp], reasons.get(fp))
        for fp, f in first.items()
    ), settings)


def _in_scope(report: Report) -> Callable[[Entry], bool]:
    """Entries this run could have seen again: a scanned file and a selected rule."""
    scanned = {r.path for r in report.results}
    return lambda e: e.path in scanned and e.rule in report.rules


def gone(report: Report, baseline: Baseline) -> tuple[tuple[str, str, str, int], ...]:
    """Baseline entries (in this run's scope) with fewer occurrences now: (rule, path, subject, missing)."""
    now = Counter(report.findings[i].fingerprint for i in gated(report))
    in_scope = _in_scope(report)
    return tuple(
        (e.rule, e.path, e.subject, e.count - now[e.fingerprint])
        for e in sorted(baseline.entries, key=Entry.sort_key)
        if in_scope(e) and now[e.fingerprint] < e.count
    )


def shrink(baseline: Baseline, report: Report) -> Baseline:
    """`--update-baseline`: counts lowered to what is still found, fixed entries dropped; nothing added."""
    now = Counter(report.findings[i].fingerprint for i in gated(report))
    in_scope = _in_scope(report)
    kept = []
    for e in baseline.entries:
        count = min(e.count, now[e.fingerprint]) if in_scope(e) else e.count
        if count:
            kept.append(replace(e, count=count))
    return Baseline(tuple(kept), baseline.settings)


# --- marking -----------------------------------------------------------------------------------------

def mark(report: Report, known: Mapping[str, int], gate: Gate,
         added: Callable[[Finding], bool] | None = None) -> Report:
    """The report with each finding marked new or known. Of the occurrences of one fingerprint, as many as were
    known are known; the rest are new, preferring findings on added lines (`added`), then the later ones."""
    groups: dict[str, list[int]] = {}
    for i in gated(report):
        groups.setdefault(report.findings[i].fingerprint, []).append(i)
    new = [False] * len(report.findings)   # a finding that would not break is never new: the gate does not weigh it
    for fp, indexes in groups.items():
        extra = len(indexes) - known.get(fp, 0)
        if extra <= 0:
            continue

        def likely_new(i: int) -> tuple:
            f = report.findings[i]
            return (bool(added and added(f)), f.span.line or 0, f.span.column or 0)

        for i in sorted(indexes, key=likely_new, reverse=True)[:extra]:
            new[i] = True
    findings = tuple(replace(f, new=flag) for f, flag in zip(report.findings, new))
    return replace(report, findings=findings, gate=gate)


def against_baseline(report: Report, baseline: Baseline, where: Path) -> Report:
    return mark(report, baseline.counts(), Gate("baseline", str(where), gone=gone(report, baseline)))


# --- diff-base ---------------------------------------------------------------------------------------

def against_git(report: Report, change: Change, rulebook, options) -> Report:
    """New = what the working tree adds since its merge-base with the ref (run/gate/changeset.py). The base is judged
    as the head is, with its whole tree (build files, headers, every module) as context: the changed files
    (under their old names when renamed) and the unchanged files with findings now are audited in the base
    tree, so a change that removes a guard the build defines, or a build change that makes old code live, is new."""
    diff = scanned_part(change, {r.path for r in report.results})
    changed = diff.changed
    with_findings = {report.findings[i].path for i in gated(report)} - set(changed)
    judged = {old: now for now, old in changed.items() if old is not None} | {p: p for p in with_findings}
    known: Counter = Counter()
    if judged and change.top is not None and change.base is not None:
        known, unjudged = _known_at_base(report, change, judged, rulebook, options)
        known.update(report.findings[i].fingerprint for i in gated(report) if report.findings[i].path in unjudged)
    gate = Gate("diff-base", change.label, changed_files=len(changed), changed_paths=tuple(sorted(changed)))
    return mark(report, known, gate, lambda f: diff.adds(f.path, f.span.line or 0))


# the files a base tree needs besides what a scan reads: what decides which files are read
TREE_FILES = frozenset({".gitignore", ".gitmodules"})


def _known_at_base(report: Report, change: Change, judged: dict[str, str], rulebook,
                   options) -> tuple[Counter, set[str]]:
    """The fingerprints of what breaks in the base versions of the `judged` files (base name -> name now), under
    their names now; and the unchanged files the base audit could not judge (not scanned there), known as now."""
    from auditor.match.inputs.kinds import classify
    from auditor.run.pipeline import audit
    from auditor.util import vcs

    assert change.top is not None and change.base is not None
    inner = "" if change.prefix == "." else change.prefix + "/"
    try:
        # the base tree read as blobs (git cat-file), never checked out: no filter or hook of the repository
        # runs, and the working tree is not touched; only the files a scan would read
        listing = vcs.tree_paths(change.top, change.base)
        wanted = [p for p in listing if p.startswith(inner) and (classify(p[len(inner):]) is not None
                                                                 or PurePosixPath(p).name in TREE_FILES)]
        with vcs.base_tree(change.top, change.base, wanted, options.max_file_size) as tree:
            base_root = tree / change.prefix if inner else tree
            if not base_root.is_dir():
                return Counter(), {now for old, now in judged.items() if old == now}
            before = replace(audit([base_root], rulebook, options, root=base_root, only=frozenset(judged)),
                             fail_on_verify=report.fail_on_verify)
    except vcs.GitError as err:
        raise GateError(str(err)) from None
    read = {r.path for r in before.results if r.error is None}
    known = Counter(fingerprint(f.rule_id, judged[f.path], f.subject)
                    for f in before.findings if before.breaks(f) and f.path in judged)
    return known, {now for old, now in judged.items() if old == now and old not in read}
