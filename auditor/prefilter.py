"""Cheap first: the words a file must contain for any rule of a family to match it.

A file that contains none of them is not parsed at all. The needles are derived from the rules
themselves (import roots, the last literal part of qualified names, literals every match of a regex
must contain), so a rule cannot be skipped by a forgotten hand-written list.
"""
from __future__ import annotations

import re
from collections.abc import Iterable

try:  # Python 3.11+: the regex parser moved
    import re._parser as sre_parse  # type: ignore[import-not-found]
    from re import _constants as sre_constants  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover
    import sre_constants  # type: ignore[no-redef]
    import sre_parse  # type: ignore[no-redef]

MIN_NEEDLE = 3


def _literal_runs(parsed) -> list[str]:
    """Literal strings that every match of this (sub)pattern contains, longest first."""
    runs: list[str] = []
    current: list[str] = []
    for op, arg in parsed:
        if op is sre_constants.LITERAL:
            current.append(chr(arg))
            continue
        if current:
            runs.append("".join(current))
            current = []
        if op is sre_constants.SUBPATTERN:
            runs.extend(_literal_runs(arg[-1]))
        elif op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT) and arg[0] >= 1:
            runs.extend(_literal_runs(arg[2]))
    if current:
        runs.append("".join(current))
    return sorted(runs, key=len, reverse=True)


def regex_needles(pattern: str) -> frozenset[str] | None:
    """Lower-cased literals of which every match contains at least one; None when none can be derived."""
    try:
        parsed = sre_parse.parse(pattern)
    except Exception:  # an unusual pattern only costs us the shortcut
        return None
    return _needles(parsed)


def _needles(parsed) -> frozenset[str] | None:
    core = [item for item in parsed if item[0] is not sre_constants.AT]
    if len(core) == 1 and core[0][0] is sre_constants.BRANCH:
        found: set[str] = set()
        for branch in core[0][1][1]:
            inner = _needles(branch)
            if inner is None:
                return None
            found |= inner
        return frozenset(found)
    if len(core) == 1 and core[0][0] is sre_constants.SUBPATTERN:
        return _needles(core[0][1][-1])
    runs = [r for r in _literal_runs(parsed) if len(r) >= MIN_NEEDLE]
    return frozenset({runs[0].lower()}) if runs else None


def name_needle(pattern: str) -> str | None:
    """The last literal component of a dotted or `::` name pattern (`torch.version.cuda` -> `cuda`)."""
    parts = [p for p in re.split(r"\.|::", pattern) if p]
    for part in reversed(parts):
        literal = max(re.split(r"[*?\[\]]", part), key=len)
        if len(literal) >= MIN_NEEDLE:
            return literal.lower()
    return None


class Needles:
    """Any-of set of needles; `None` inside means some rule matches without a needle (always scan)."""

    def __init__(self, needles: Iterable[str | None]):
        found = set(needles)
        self.always = None in found
        self.words = tuple(sorted(w for w in found if w))
        self._regex = re.compile("|".join(map(re.escape, self.words))) if self.words else None

    def may_match(self, lowered_text: str) -> bool:
        if self.always:
            return True
        return bool(self._regex and self._regex.search(lowered_text))


_CACHE: dict[tuple[str, str], Needles] = {}


def python_needles(rulebook) -> Needles:
    """What a Python file must contain for a python or import rule, or embedded CUDA, to apply."""
    from auditor.engines.python import EMBEDDED_CUDA_CALLS

    key = (rulebook.digest, "python")
    if key not in _CACHE:
        needles: list[str | None] = []
        for rule in rulebook.family("dependency"):
            needles.extend(module.split(".")[0].lower() for module in rule.match.get("imports", ()))
        for rule in rulebook.family("python"):
            for key_name in ("calls", "names"):
                needles.extend(name_needle(p) for p in rule.match.get(key_name, ()))
            if "strings" in rule.match:
                found = regex_needles(rule.match["strings"])
                if found is None and rule.match.get("in_calls"):  # the string must sit inside one of these calls
                    found = frozenset(name_needle(call) for call in rule.match["in_calls"])
                needles.extend(found if found is not None else [None])
        needles.extend(name_needle(call) for call in EMBEDDED_CUDA_CALLS)
        _CACHE[key] = Needles(needles)
    return _CACHE[key]
