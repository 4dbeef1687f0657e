"""The literals every match of a regular expression must contain (`cu(Init|Mem[A-Z])` -> cuInit or cuMem):
what a file must hold before a regex rule or a query's #match? predicate can match it
(auditor/match/rulebook/prefilter.py)."""
from __future__ import annotations

import re

try:  # Python 3.11+: the regex parser moved
    import re._parser as sre_parse  # type: ignore[import-not-found]
    from re import _constants as sre_constants  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover
    import sre_constants
    import sre_parse

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


def regex_needles(pattern: str, min_len: int = MIN_NEEDLE) -> frozenset[str] | None:
    """Lower-cased literals of which every match contains at least one; None when none can be derived."""
    try:
        parsed = sre_parse.parse(pattern)
    except (re.error, OverflowError, RecursionError):  # an unusual pattern only costs us the shortcut
        return None
    return _needles(parsed, min_len)


def _prefixes(parsed, limit: int = 64) -> tuple[set[str], bool]:
    """Literal prefixes one of which every match starts with (`cu(Init|Mem[A-Z])` -> cuInit, cuMem), and
    whether they are whole matches (so that what follows may be appended)."""
    out = {""}
    for op, arg in parsed:
        if op is sre_constants.AT:
            continue
        if op is sre_constants.LITERAL:
            out = {p + chr(arg) for p in out}
            continue
        if op is sre_constants.SUBPATTERN:
            inner, complete = _prefixes(arg[-1], limit)
        elif op is sre_constants.BRANCH:
            parts = [_prefixes(branch, limit) for branch in arg[1]]
            inner = set().union(*(p for p, _ in parts))
            complete = all(c for _, c in parts)
        else:
            return out, False
        grown = {p + q for p in out for q in inner}
        if len(grown) > limit:
            return out, False
        out = grown
        if not complete:
            return out, False
    return out, True


def _needles(parsed, min_len: int = MIN_NEEDLE) -> frozenset[str] | None:
    """The most selective any-of set among the literal runs, prefixes, alternations, groups and lookaheads
    that every match must go through (selectivity: the length of the set's shortest needle)."""
    candidates: list[frozenset[str]] = [frozenset({run.lower()}) for run in _literal_runs(parsed)
                                        if len(run) >= min_len]
    prefixes, _ = _prefixes(parsed)
    if prefixes and min(map(len, prefixes)) >= min_len:
        candidates.append(frozenset(p.lower() for p in prefixes))
    for op, arg in parsed:
        inner = None
        if op is sre_constants.BRANCH:
            common = _common_literal(arg[1], min_len)
            if common:
                candidates.append(frozenset({common}))
            branches = [_needles(branch, min_len) for branch in arg[1]]
            known = [b for b in branches if b is not None]
            inner = None if len(known) < len(branches) else frozenset[str]().union(*known)
        elif op is sre_constants.SUBPATTERN:
            inner = _needles(arg[-1], min_len)
        elif op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT) and arg[0] >= 1:
            inner = _needles(arg[2], min_len)
        elif op is sre_constants.ASSERT and arg[0] == 1:  # a lookahead's text is in the subject too
            inner = _needles(arg[1], min_len)
        if inner:
            candidates.append(inner)
    return max(candidates, key=_selectivity, default=None)


def _selectivity(needles: frozenset[str]) -> tuple[int, int]:
    """Longer needles are rarer; of sets as long, the smaller one."""
    return min(map(len, needles)), -len(needles)


def _common_literal(branches, min_len: int) -> str | None:
    """The longest literal every alternative contains (`warp_?size|threads_?per_?warp` -> warp)."""
    runs = [[run.lower() for run in _literal_runs(branch)] for branch in branches]
    if not runs or not all(runs):
        return None
    found = None
    for run in runs[0]:
        for size in range(len(run), max(min_len, len(found or "")) - 1, -1):
            for start in range(len(run) - size + 1):
                piece = run[start:start + size]
                if all(any(piece in other for other in others) for others in runs[1:]):
                    found = piece if found is None or len(piece) > len(found) else found
                    break
            if found is not None and len(found) >= size:
                break
    return found if found is not None and len(found) >= min_len else None
