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
from pathlib import Path

from auditor.util.errors import ToolError
from auditor.util.escape import visible
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

def against_git(report: Report, root: Path, ref: str, rulebook, options) -> Report:
    """New = what the working tree adds since its merge-base with `ref`. Files that did not change are known as
    they are; the changed ones are compared with their base version (under their old name when renamed),
    scanned from the merge-base checked out in a temporary worktree."""
    top, prefix = _repository_of(root)
    base, since = _changes_since_merge_base(top, ref)
    diff = _changed_scanned_files(since, prefix, {r.path for r in report.results})
    changed, added_lines = diff.changed, diff.added_lines
    known = Counter(report.findings[i].fingerprint for i in gated(report) if report.findings[i].path not in changed)
    renamed = {old: now for now, old in changed.items() if old is not None}
    if renamed:
        known.update(_known_at_base(report, top, prefix, base, renamed, diff.base_paths, rulebook, options))

    def added(f: Finding) -> bool:
        return f.path in changed and (changed[f.path] is None or (f.span.line or 0) in added_lines.get(f.path, ()))

    gate = Gate("diff-base", f"{ref} (merge-base {base[:12]})", changed_files=len(changed),
                changed_paths=tuple(sorted(changed)), unread_added=_unread_added(report, changed, added_lines))
    return mark(report, known, gate, added)


def _unread_added(report: Report, changed: dict[str, str | None],
                  added_lines: dict[str, frozenset[int]]) -> tuple[tuple[str, int, str], ...]:
    """(path, line, rule): the first line the change adds inside each stretch no parse could read, for every
    rule whose words occur in that stretch (FileFacts.unread_rules). A new file adds all its lines."""
    out: list[tuple[str, int, str]] = []
    for result in report.results:
        if result.path not in changed or not result.facts.unread_rules:
            continue
        added = None if changed[result.path] is None else added_lines.get(result.path, frozenset())
        for first, last, rules in result.facts.unread_rules:
            line = next((n for n in range(first, last + 1) if added is None or n in added), None)
            if line is not None:
                out += [(result.path, line, rule) for rule in rules]
    return tuple(out)


def _repository_of(root: Path) -> tuple[Path, str]:
    """The git repository's top directory, and the scanned root's path within it ("." when it is the top)."""
    from auditor.util import vcs
    try:
        top = vcs.toplevel(root)
        prefix = root.resolve().relative_to(top.resolve()).as_posix()
    except ValueError:
        raise GateError(f"--diff-base: the scanned paths are not inside one git repository ({root})") from None
    except vcs.GitError as err:
        raise GateError(str(err)) from None
    return top, prefix


def _changes_since_merge_base(top: Path, ref: str):
    """The merge-base of the working tree with `ref`, and what changed since (vcs.changes)."""
    from auditor.util import vcs
    try:
        vcs.clean_stale(top)
        base = vcs.merge_base(top, ref)
        return base, vcs.changes(top, base)
    except vcs.GitError as err:
        raise GateError(str(err)) from None


def _as_reported(prefix: str, path: str | None) -> str | None:
    """A path from git (from the repository root, raw) as the report names it (from the scanned root)."""
    if path is None:
        return None
    if prefix != ".":
        if not path.startswith(prefix + "/"):
            return None
        path = path[len(prefix) + 1:]
    return visible(path)


@dataclass(frozen=True, slots=True)
class _ChangedFiles:
    changed: dict[str, str | None]          # root-relative path now -> at the base (None: a new file)
    added_lines: dict[str, frozenset[int]]  # of a changed file that existed at the base
    base_paths: dict[str, str]              # root-relative path at the base -> from the repository root, raw


def _changed_scanned_files(since, prefix: str, scanned: set[str]) -> _ChangedFiles:
    """The scanned files that changed since the merge-base, under the names the report uses."""
    changed: dict[str, str | None] = {}
    added_lines: dict[str, frozenset[int]] = {}
    base_paths: dict[str, str] = {}
    for now_path, old_path in since.old_path.items():
        here = _as_reported(prefix, now_path)
        if here in scanned:
            changed[here] = _as_reported(prefix, old_path)
            if old_path is not None:
                added_lines[here] = since.added_lines.get(now_path, frozenset())
            if old_path is not None and (old_here := _as_reported(prefix, old_path)) is not None:
                base_paths[old_here] = old_path
    return _ChangedFiles(changed, added_lines, base_paths)


def _known_at_base(report: Report, top: Path, prefix: str, base: str, renamed: dict[str, str],
                   base_paths: dict[str, str], rulebook, options) -> list[str]:
    """The fingerprints of what breaks in the base versions of the changed files, under their names now."""
    from auditor.util import vcs
    from auditor.pipeline import audit

    try:
        # the base versions read as blobs (git cat-file), never checked out: no filter or hook of the
        # repository runs, and the working tree is not touched
        wanted = [base_paths[old] for old in renamed if old in base_paths]
        with vcs.base_tree(top, base, wanted, options.max_file_size) as tree:
            base_root = tree if prefix == "." else tree / prefix
            if not base_root.is_dir():
                return []
            before = replace(audit([base_root], rulebook, options, root=base_root, only=frozenset(renamed)),
                             fail_on_verify=report.fail_on_verify)
            return [fingerprint(f.rule_id, renamed[f.path], f.subject)
                    for f in before.findings if before.breaks(f) and f.path in renamed]
    except vcs.GitError as err:
        raise GateError(str(err)) from None
