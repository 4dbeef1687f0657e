"""Which rule patterns a qualified name matches (`a.b.*`, globs across dots), compiled once per pattern set."""
from __future__ import annotations

import fnmatch
import re
from collections.abc import Sequence
from functools import cache

from auditor.types import Rule


def pattern_matches(patterns: Sequence[str], names: frozenset[str]) -> str | None:
    """The first name (in sorted order) that one of the patterns matches: `a.b.*` is a.b and what is under
    it, `*`/`?` are wildcards (across dots too), anything else is the exact name."""
    if not names:
        return None
    matches = _name_regex(tuple(patterns)).fullmatch
    for name in sorted(names) if len(names) > 1 else names:
        if matches(name):
            return name
    return None


@cache
def _name_regex(patterns: tuple[str, ...]) -> re.Pattern:
    parts = []
    for pattern in patterns:
        if pattern.endswith(".*"):
            parts.append(re.escape(pattern[:-2]) + r"(?:\..*)?")
        elif "*" in pattern or "?" in pattern:
            parts.append(fnmatch.translate(pattern))
        else:
            parts.append(re.escape(pattern))
    return re.compile("|".join(f"(?:{part})" for part in parts), re.DOTALL)


@cache
def _last_names(patterns: tuple[str, ...]) -> frozenset[str] | None:
    """The last dotted component every name these patterns match ends with (`*props.major` -> major), or None
    when a pattern leaves it open. An attribute whose own name is not among them cannot match."""
    found = set()
    for pattern in patterns:
        tail = re.split(r"[*?\[]", pattern)[-1]
        if pattern.endswith(".*") or "." not in tail and tail != pattern:
            return None
        found.add(tail.rsplit(".", 1)[-1])
    return frozenset(found)


@cache
def compiled_regex(pattern: str) -> re.Pattern:
    return re.compile(pattern)




def attribute_names(rules: list[Rule]) -> frozenset[str] | None:
    """The attribute names any of these rules can match (None: any)."""
    found: set[str] = set()
    for rule in rules:
        names = _last_names(rule.python.names)
        if names is None:
            return None
        found |= names
    return frozenset(found)
