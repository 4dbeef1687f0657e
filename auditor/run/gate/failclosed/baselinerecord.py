"""The baseline's record of the gate's settings (auditor/cli/basesettings.py applies it) and, when a git base is
known too (`--diff-base` with `--baseline`), the baseline itself is compared with the
base's: a change that adds known findings to it, or changes its record, fails the run.
"""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

RECORD_KEY = "settings"
MAX_LISTED = 5


def read_record(path: Path) -> tuple[dict | None, Counter] | None:
    """(the record or None, the entries' counts) of a baseline file; None when it cannot be read (the gate
    reports why)."""
    from auditor.util.boundedio import BASELINE_CAP, UnsafeRead, read_bounded

    try:
        data = json.loads(read_bounded(path, BASELINE_CAP, "baseline", follow_links=False).decode("utf-8"))
    except (OSError, UnsafeRead, UnicodeDecodeError, ValueError):
        return None
    return _parsed(data)


def _parsed(data: object) -> tuple[dict | None, Counter] | None:
    if not isinstance(data, dict) or not isinstance(data.get("entries"), list):
        return None
    record = data.get(RECORD_KEY)
    counts: Counter = Counter()
    for entry in data["entries"]:
        if isinstance(entry, dict) and isinstance(entry.get("fingerprint"), str) \
                and isinstance(entry.get("count"), int):
            # counted by what a reader recognises: rule and path (the fingerprint is made from them)
            counts[f"{entry.get('rule')} in {entry.get('path')}: {entry.get('subject')}"] += entry["count"]
    return (record if isinstance(record, dict) else None), counts


def grown(root: Path, ref: str, baseline: Path) -> tuple[tuple[str, str], ...]:
    """Gate findings for a baseline that the change since the merge-base with `ref` grew or re-recorded."""
    from auditor.util import vcs
    now = read_record(baseline)
    if now is None:
        return ()
    try:
        top = vcs.toplevel(root)
        relative = baseline.resolve().relative_to(top.resolve()).as_posix()
        base = vcs.merge_base(top, ref)
        data = vcs.blobs(top, base, [relative], 64 * 1024 * 1024).get(relative)
    except (ValueError, vcs.GitError):
        return ()
    then = _parsed(_json(data)) if data is not None else (None, Counter())
    if then is None:
        then = (None, Counter())
    added = {fp: n - then[1][fp] for fp, n in now[1].items() if n > then[1][fp]}
    out = []
    if added:
        listed = ", ".join(sorted(added)[:MAX_LISTED]) + (" …" if len(added) > MAX_LISTED else "")
        why = (f"this change adds {sum(added.values())} known finding(s) to the baseline ({listed}) since {ref}: "
               "a baseline may only shrink in a change")
        out.append((relative, why))
    if (now[0] or {}) != (then[0] or {}):
        out.append((relative, f"this change rewrites the settings the baseline records since {ref}"))
    return tuple(out)


def _json(data: bytes) -> object:
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None


def _show(value: object) -> str:
    return json.dumps(value) if not isinstance(value, str) else repr(value)
