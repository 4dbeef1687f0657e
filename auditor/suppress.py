"""Inline suppressions: `rocm-audit: ignore[RA101]` (this line, or the next when on its own line)
and `rocm-audit: file-ignore[RA101]` (the whole file). A bare `ignore` covers every rule."""
from __future__ import annotations

import re
from dataclasses import dataclass

MARKER = re.compile(r"rocm-audit:\s*(file-ignore|ignore)(?:\[([^\]]*)\])?")
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


def read_suppressions(text: str, known_ids: frozenset[str] | None = None) -> Suppressions:
    if "rocm-audit:" not in text:
        return Suppressions({}, frozenset())
    by_line: dict[int, set[str]] = {}
    whole: set[str] = set()
    unknown: list[tuple[int, str]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        for m in MARKER.finditer(line):
            kind, listed = m.group(1), m.group(2)
            ids = {i.strip().upper() for i in listed.split(",") if i.strip()} if listed else {ALL}
            if known_ids is not None:
                unknown.extend((number, i) for i in sorted(ids - known_ids - {ALL}))
            if kind == "file-ignore":
                whole |= ids
                continue
            own_line = line.lstrip().startswith(COMMENT_START)
            by_line.setdefault(number + 1 if own_line else number, set()).update(ids)
    return Suppressions({k: frozenset(v) for k, v in by_line.items()}, frozenset(whole), tuple(unknown))


def unknown_suppressions(results) -> tuple[tuple[str, int, str], ...]:
    """(path, line, rule id) of each suppression naming a rule that does not exist, from the scan's facts."""
    found: list[tuple[str, int, str]] = []
    for result in results:
        found.extend((result.path, line, rule_id) for line, rule_id in result.facts.unknown_suppressions)
    return tuple(sorted(found))


def unknown_suppression_message(rule_id: str) -> str:
    return f"unknown rule id {rule_id} in a rocm-audit suppression (rocm-audit rules lists them)"
