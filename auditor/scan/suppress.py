"""Inline suppressions: `rocm-audit: ignore[RA101]` (this line, or the next when on its own line)
and `rocm-audit: file-ignore[RA101]` (the whole file). A bare `ignore` covers every rule. A rule may be named by
its id or its name (`ignore[pynvml]`), and `# noqa: RA101` (as in ruff) is the same as `ignore[RA101]`."""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

MARKER = re.compile(r"rocm-audit:\s*(file-ignore|ignore)(?:\[([^\]]*)\])?")
NOQA = re.compile(r"(?i)(?:#|//)\s*noqa:\s*([\w-]+(?:[\s,]+[\w-]+)*)")
NOQA_HINT = re.compile(r"(?i)noqa:")
RA_ID = re.compile(r"^RA\d+$")
COMMENT_START = ("#", "//", "/*", "*", "--", ";", "<!--", "%")
ALL = "*"


@dataclass(frozen=True, slots=True)
class Suppressions:
    by_line: dict[int, frozenset[str]]
    whole_file: frozenset[str]
    unknown_ids: tuple[tuple[int, str], ...] = ()

    def covers(self, rule_id: str, line: int | None) -> bool:
        if ALL in self.whole_file or rule_id in self.whole_file:
            return True
        if line is None:
            return False
        ids = self.by_line.get(line, frozenset())
        return ALL in ids or rule_id in ids


def read_suppressions(text: str, known: Mapping[str, str] | None = None) -> Suppressions:
    """`known`: what a comment may name, upper-cased, to the rule id (Rulebook.suppression_ids: every rule's id
    and name, whatever --select/--ignore chose). A name becomes its id; an item that names no rule is unknown
    in a `rocm-audit:` comment, and left to the other tools in a `# noqa:` one (`# noqa: E501, RA112`)."""
    if "rocm-audit:" not in text and not NOQA_HINT.search(text):
        return Suppressions({}, frozenset())
    by_line: dict[int, set[str]] = {}
    whole: set[str] = set()
    unknown: list[tuple[int, str]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        for kind, ids, strangers in _markers(line, known):
            unknown.extend((number, i) for i in strangers)
            if kind == "file-ignore":
                whole |= ids
                continue
            own_line = line.lstrip().startswith(COMMENT_START)
            by_line.setdefault(number + 1 if own_line else number, set()).update(ids)
    return Suppressions({k: frozenset(v) for k, v in by_line.items()}, frozenset(whole), tuple(unknown))


def _markers(line: str, known: Mapping[str, str] | None):
    """(kind, rule ids, unknown items) of each suppression on the line."""
    for m in MARKER.finditer(line):
        kind, listed = m.group(1), m.group(2)
        items = [i.strip().upper() for i in listed.split(",") if i.strip()] if listed else []
        if not items:
            yield kind, {ALL}, []
            continue
        if known is None:
            yield kind, set(items), []
            continue
        yield kind, {known[i] for i in items if i in known}, sorted(i for i in items if i not in known)
    for m in NOQA.finditer(line):   # ruff's and flake8's spelling; only our own rules, a bare `noqa` is theirs
        items = [i.upper() for i in re.split(r"[\s,]+", m.group(1)) if i]
        ids = {known[i] for i in items if i in known} if known is not None else {i for i in items if RA_ID.match(i)}
        if ids:
            yield "ignore", ids, []


def unknown_suppressions(results) -> tuple[tuple[str, int, str], ...]:
    """(path, line, rule id) of each suppression naming a rule that does not exist, from the scan's facts."""
    found: list[tuple[str, int, str]] = []
    for result in results:
        found.extend((result.path, line, rule_id) for line, rule_id in result.facts.unknown_suppressions)
    return tuple(sorted(found))


def unknown_suppression_message(rule_id: str) -> str:
    return f"unknown rule id {rule_id} in a rocm-audit suppression (rocm-audit rules lists them)"
