"""Cheap first: the words a file must contain for any rule of a family to match it.

A file that contains none of them is not parsed at all. The needles are derived from the rules
themselves (import roots, the last literal part of qualified names, literals every match of a regex
must contain), so a rule cannot be skipped by a forgotten hand-written list.
"""
from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterable

import ahocorasick

from auditor.match.rulebook.regex_literals import MIN_NEEDLE, regex_needles


class Word(str):
    """A needle that counts only as a whole identifier in code (`cuda` in `torch.cuda`, not in `CUDA_HOME`
    or in a `# Copyright NVIDIA` comment line): what a name, call or import can only be. A plain str needle is
    any substring of the whole text (string contents, which the `strings` rules match, can hold anything)."""

    __slots__ = ()


_IDENTIFIER = re.compile(r"[a-z0-9_]+")
_COMMENT_LINE = re.compile(r"^[ \t]*#.*$", re.MULTILINE)


def _word_or_text(literal: str) -> str:
    return Word(literal) if _IDENTIFIER.fullmatch(literal) else literal


def name_needle(pattern: str) -> str | None:
    """The last literal component of a dotted or `::` name pattern (`torch.version.cuda` -> `cuda`): a Word
    when the component has no wildcard, else the longest literal piece of it as plain text."""
    parts = [p for p in re.split(r"\.|::", pattern) if p]
    for part in reversed(parts):
        literal = max(re.split(r"[*?\[\]]", part), key=len)
        if len(literal) >= MIN_NEEDLE:
            return _word_or_text(literal.lower()) if literal == part else literal.lower()
    return None


class Haystack:
    """A file's text as the needles are looked for in it: lower-cased, and its identifiers outside comment
    lines as a set (built once, on first use). A line that starts with `#` is a comment or part of a string,
    never code, so no name, call or import can be on it."""

    __slots__ = ("text", "_words")

    def __init__(self, lowered_text: str):
        self.text = lowered_text
        self._words: frozenset[str] | None = None

    @property
    def words(self) -> frozenset[str]:
        if self._words is None:
            self._words = frozenset(_IDENTIFIER.findall(_COMMENT_LINE.sub("", self.text)))
        return self._words


def _haystack(text: "str | Haystack") -> Haystack:
    return text if isinstance(text, Haystack) else Haystack(text)


def _automaton(texts: Iterable[str]) -> "ahocorasick.Automaton | None":
    """An Aho-Corasick automaton finding every occurrence of these needles in one pass; None without any."""
    automaton = ahocorasick.Automaton()
    for needle in sorted(set(texts)):
        automaton.add_word(needle, needle)
    if not len(automaton):
        return None
    automaton.make_automaton()
    return automaton


class Needles:
    """Any-of set of needles; `None` inside means some rule matches without a needle (always scan)."""

    def __init__(self, needles: Iterable[str | None]):
        found = set(needles)
        self.always = None in found
        self.words = frozenset(w for w in found if isinstance(w, Word))
        self._automaton = _automaton(w for w in found if w and not isinstance(w, Word))

    def may_match(self, text: "str | Haystack") -> bool:
        """`text`: the file's lower-cased text, or its Haystack."""
        if self.always:
            return True
        haystack = _haystack(text)
        if self._automaton is not None and next(self._automaton.iter(haystack.text), None) is not None:
            return True
        return not self.words.isdisjoint(haystack.words)


def rule_needles(rule) -> "Clauses | None":
    """What a Python file must contain (lower-cased) for this python rule or import rule to match it: one needle
    of every clause; None when no needle can be derived (the rule always runs)."""
    return _spec_needles(rule.spec)


# The regex parser and the query reader take ~50 ms for all the rules: each rule's needles are derived once per
# process. A pure function of a frozen rule spec (or of a query's text), so the memo can never be stale.
@functools.cache
def _spec_needles(spec) -> "Clauses | None":
    return _rule_needles(spec)


def _second_needle(pattern: str) -> str | None:
    """Another literal component of a dotted name pattern than name_needle's, the longest (`cpp_extension` of
    `torch.utils.cpp_extension.load`), as a Word: a qualified name resolves only through an import and attribute
    chain that spell every component of it."""
    last = name_needle(pattern)
    parts = [p.lower() for p in re.split(r"\.|::", pattern) if p]
    others = [p for p in parts if p != last and len(p) >= MIN_NEEDLE and _IDENTIFIER.fullmatch(p)]
    return Word(max(others, key=len)) if others else None


def _rule_needles(spec) -> "Clauses | None":
    """The rule matches through one of its alternatives (an import, a name or call, a string, hand-written
    needles), each of which needs all of its clauses: written as clauses of the whole rule, one per way of picking
    a clause from every alternative."""
    alternatives: list[list[frozenset[str]]] = []
    imports = [_word_or_text(module.split(".")[0].lower()) for module in getattr(spec, "imports", ())]
    if imports:
        alternatives.append([frozenset(imports)])
    patterns = [*getattr(spec, "calls", ()), *getattr(spec, "names", ())]
    if patterns:
        last = [name_needle(p) for p in patterns]
        roots = [_second_needle(p) for p in patterns]
        if None in last:
            return None
        alternatives.append([frozenset(n for n in last if n is not None)]
                            + ([frozenset(r for r in roots if r is not None)] if None not in roots else []))
    if getattr(spec, "needles", ()):
        alternatives.append([frozenset(word.lower() for word in spec.needles)])
    elif getattr(spec, "strings", None) is not None:
        # a string match needs its literal and, with `in_calls`, one of those calls around it, so a literal found
        # as a bare substring (`mpi` in "compile") does not run the rule alone
        clauses = []
        literal = regex_needles(spec.strings)
        if literal is not None:
            clauses.append(frozenset(literal))
        calls = [name_needle(call) for call in getattr(spec, "in_calls", ())]
        if calls and None not in calls:
            clauses.append(frozenset(c for c in calls if c is not None))
        if not clauses:
            return None
        alternatives.append(clauses)
    if not alternatives:
        return None
    return tuple(dict.fromkeys(frozenset().union(*pick) for pick in itertools.product(*alternatives)))


def rules_present(rules: tuple, text: "str | Haystack") -> tuple:
    """The rules whose needles occur in the text (the file's lower-cased text or its Haystack), and those
    without needles: the words by one set intersection, the plain-text needles in one pass of an automaton."""
    index = _needle_index(rules)
    present = index.present(_haystack(text))
    return tuple(rule for rule, clauses in index.rules
                 if clauses is None or all(not clause.isdisjoint(present) for clause in clauses))


class NeedleIndex:
    """The needles of some rules, looked for together: every occurrence of every plain-text needle is found in
    one pass over the text (Aho-Corasick), which gives the same set as one substring search per needle."""

    def __init__(self, rules: tuple):
        self.rules = tuple((rule, rule_needles(rule)) for rule in rules)
        needles = {needle for _, clauses in self.rules for clause in clauses or () for needle in clause}
        self.words = frozenset(n for n in needles if isinstance(n, Word))
        self._automaton = _automaton(n for n in needles if not isinstance(n, Word))

    def present(self, haystack: Haystack) -> set[str]:
        found: set[str] = set(self.words & haystack.words)
        if self._automaton is not None:
            found.update(needle for _, needle in self._automaton.iter(haystack.text))
        return found


@functools.lru_cache(maxsize=16)
def _needle_index(rules: tuple) -> NeedleIndex:
    return NeedleIndex(rules)


class PythonGate:
    """Whether a Python file is worth the rule walk: some python or import rule's needles are all in it, or one
    of the engine's own calls (those that carry embedded CUDA) is named in it."""

    def __init__(self, rules: tuple, also: Needles):
        self.rules = rules
        self.also = also

    def may_match(self, haystack: Haystack) -> bool:
        return bool(rules_present(self.rules, haystack)) or self.also.may_match(haystack)


def python_gate(context, also_calls: Iterable[str] = (), also_text: Iterable[str] = ()) -> PythonGate:
    """What a Python file must contain for a python or import rule in force (of the run's scan context), or one of
    `also_calls` (the engine's calls that carry embedded CUDA) or of `also_text` (lower-case words of CUDA source
    held in a string), to apply."""
    also_calls = tuple(sorted(also_calls))
    also_text = tuple(sorted(also_text))

    def make() -> PythonGate:
        rules = tuple(rule for rule in context.family("dependency") + context.family("python")
                      if rule.matcher == "python" or getattr(rule.spec, "imports", ()))
        return PythonGate(rules, Needles([*(name_needle(call) for call in also_calls), *also_text]))

    return context.derived(("python-gate", also_calls, also_text), make)


# --- tree-sitter queries ---------------------------------------------------------------------------
# Compiling a query against the CUDA grammar costs 10-400 ms, far more than running it, so a query is
# compiled and run only on files that contain the text its patterns require: the anonymous tokens it
# names ("__global__"), the strings of its #eq?/#any-of? predicates and the literals its #match?
# regexes require. The result is a conjunction of any-of clauses; an empty one means "always run".

_QUERY_TOKEN = re.compile(r'''\s+|;[^\n]*|"(?:\\.|[^"\\])*"|[()\[\]]|[*+?]|@[\w.\-]+|#[\w\-]+[?!]?|!?[\w.\-/]+:?|.''')
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0"}
# Named nodes of the CUDA grammar that always begin with a fixed token.
NODE_TOKENS = {"kernel_call_syntax": "<<<", "launch_bounds": "__launch_bounds__"}

Clauses = tuple[frozenset[str], ...]


def _unquote(token: str) -> str:
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), token[1:-1])


class _QueryReader:
    """Just enough of the query syntax to know what text a match needs; unknown shapes need nothing."""

    def __init__(self, source: str):
        self.tokens = [t for t in _QUERY_TOKEN.findall(source) if t.strip() and not t.startswith(";")]
        self.at = 0

    def peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self) -> str:
        token = self.tokens[self.at]
        self.at += 1
        return token

    def patterns(self) -> list[tuple[Clauses, list[tuple[str, Clauses]], set[str]]]:
        """Top-level patterns: (clauses from structure, predicates as (capture, clauses), required captures)."""
        out = []
        while self.peek() is not None:
            preds: list[tuple[str, Clauses]] = []
            captures: set[str] = set()
            out.append((self.pattern(preds, captures, required=True), preds, captures))
        return out

    def pattern(self, preds, captures: set[str], required: bool) -> Clauses:
        token = self.take()
        if token.endswith(":") or token.startswith("!"):  # field name: the pattern follows
            return () if token.startswith("!") else self.pattern(preds, captures, required)
        if token == ".":
            return ()
        clauses: Clauses = ()
        if token.startswith('"'):
            text = _unquote(token).lower()
            # `"#include"`-style tokens are aliases whose text varies (`# include`)
            clauses = (frozenset({text}),) if text and not text.startswith("#") else ()
        elif token == "[":
            branches = []
            while self.peek() not in ("]", None):
                branches.append(self.pattern(preds, captures, required=False))
            self.at += 1
            clauses = _any_of(branches)
        elif token == "(" and (self.peek() or "").startswith("#"):
            preds.append(self.predicate())
            return ()
        elif token == "(":
            parts: list[Clauses] = []
            if (head := self.peek()) is not None and head in NODE_TOKENS:
                parts.append((frozenset({NODE_TOKENS[head]}),))
            while self.peek() not in (")", None):
                parts.append(self.pattern(preds, captures, required))
            self.at += 1
            clauses = tuple(c for part in parts for c in part)
        optional = False
        while (following := self.peek()) is not None and (following in ("*", "+", "?") or following.startswith("@")):
            mark = self.take()
            if mark in ("*", "?"):
                optional = True
            elif mark.startswith("@") and required and not optional:
                captures.add(mark[1:])
        return () if optional else clauses

    def predicate(self) -> tuple[str, Clauses]:
        name = self.take()
        args: list[str] = []
        while self.peek() not in (")", None):
            args.append(self.take())
        self.at += 1
        capture = args[0][1:] if args and args[0].startswith("@") else ""
        strings = [_unquote(a) for a in args[1:] if a.startswith('"')]
        if name in ("#eq?", "#any-of?") and strings and len(strings) == len(args) - 1:
            return capture, (frozenset(s.lower() for s in strings),) if all(strings) else ()
        if name == "#match?" and len(strings) == 1:
            found = regex_needles(strings[0], min_len=1)
            return capture, (found,) if found else ()
        return capture, ()


def _any_of(alternatives: list[Clauses]) -> Clauses:
    """What any one of the alternatives needs. Each clause is a union holding one clause of every
    alternative (so it holds whichever alternative matched), grown from the first one's clauses."""
    if not alternatives or any(not clauses for clauses in alternatives):
        return ()
    def uncovered(clause: frozenset[str], union: set[str]) -> set[str]:
        """Needles not implied by the union: a text holding `__shfl_sync` holds `__shfl`."""
        return {needle for needle in clause if not any(have in needle for have in union)}

    out: list[frozenset[str]] = []
    for start in alternatives[0]:
        union = set(start)
        for clauses in alternatives[1:]:
            union |= uncovered(min(clauses, key=lambda c: (len(uncovered(c, union)), -min(map(len, c)))), union)
        out.append(frozenset(union))
    return tuple(dict.fromkeys(out))


@functools.cache
def query_needles(source: str) -> Clauses:
    """Clauses of lower-cased needles; a file can match the query only if every clause has one present."""
    return _query_needles(source)


def _query_needles(source: str) -> Clauses:
    try:
        patterns = _QueryReader(source).patterns()
    except (IndexError, RecursionError):  # an unusual query (one ending early, deep) only costs us the shortcut
        return ()
    per_pattern = []
    for clauses, preds, captures in patterns:
        extra = tuple(c for capture, pred in preds if capture in captures for c in pred)
        per_pattern.append(clauses + extra)
    if len(per_pattern) == 1:
        return tuple(dict.fromkeys(per_pattern[0]))
    return _any_of(per_pattern)


def query_may_match(source: str, lowered_text: str) -> bool:
    return all(any(needle in lowered_text for needle in clause) for clause in query_needles(source))


def active_queries(sources: tuple[str, ...], lowered_text: str) -> frozenset[str]:
    """The queries a file with this (lower-cased) text may match: each needle is looked for once."""
    indexed, automaton = _query_index(sources)
    present = {needle for _, needle in automaton.iter(lowered_text)} if automaton is not None else set()
    return frozenset(source for source, clauses in indexed
                     if all(not clause.isdisjoint(present) for clause in clauses))


@functools.lru_cache(maxsize=16)
def _query_index(sources: tuple[str, ...]) -> tuple[tuple[tuple[str, Clauses], ...], "ahocorasick.Automaton | None"]:
    """The needles of each query, and one automaton finding all of them in a single pass (4x faster than a
    substring search per needle on CUDA sources)."""
    indexed = tuple((source, tuple(clause for clause in query_needles(source)
                                   if all(len(needle) >= MIN_NEEDLE for needle in clause))) for source in sources)
    # a clause with a needle of one or two characters (`%`, `(`, `32`) is in nearly every file: taken as present,
    # it need not be looked for (every `(` of a file would be a hit to go through)
    return indexed, _automaton(needle for _, clauses in indexed for clause in clauses for needle in clause)
