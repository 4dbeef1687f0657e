"""The cuda rules of a rulebook indexed for one pass over a file's inventory (auditor/match/engines/cuda.py): by exact
and glob identifier, qualified name, header, inline-asm pattern and tree-sitter query, with each lookup memoised
(a file names the same identifiers many times, and a repository the same ones in many files)."""
from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from auditor.parse import cuda as ts_cuda
from auditor.types import Rule

# A pointer to a driver function loaded at run time, named after it (lazy_cuModuleLoad, p_cuMemCreate).
LAZY_SYMBOL = re.compile(r"^(?:lazy|pfn|p|fn|fp|ptr|dyn|dl|real|orig|my)_+(cu[A-Z]\w+)$|^_+(cu[A-Z][a-z]\w+)$")


_NO_RULES: tuple[str, tuple[Rule, ...]] = ("", ())


def rule_key(rule: Rule) -> str:
    """A query rule's identity across kinds and selections (its id and query)."""
    return f"{rule.id}\0{rule.cuda.query}"


@dataclass(frozen=True)
class CudaRuleIndex:
    """The cuda rules of a rulebook, indexed for one pass over a tree's inventory."""

    rules: tuple[Rule, ...]
    exact_ids: dict[str, tuple[Rule, ...]]
    glob_ids: tuple[tuple[re.Pattern, Rule], ...]
    qualified: tuple[tuple[str, Rule], ...]
    includes: tuple[tuple[str, Rule], ...]
    asm: tuple[tuple[re.Pattern, re.Pattern | None, Rule], ...]
    queries: tuple[Rule, ...]
    calls: tuple[Rule, ...]                   # query rules of the call-regex shape (ts_cuda.call_regex)
    call_regexes: dict[str, re.Pattern]       # rule key -> its regex
    any_glob: re.Pattern | None               # matches a name when some glob of glob_ids does
    # A file names the same identifiers many times, and a repository the same ones in many files.
    _id_rules: dict[str, tuple[Rule, ...]] = field(default_factory=dict)
    _qualified_rules: dict[str, tuple[tuple[str, Rule], ...]] = field(default_factory=dict)
    _raw_ids: dict[bytes, tuple[str, tuple[Rule, ...]]] = field(default_factory=dict)
    _header_rules: dict[str, tuple[Rule, ...]] = field(default_factory=dict)

    def rules_for_raw_id(self, raw: bytes) -> tuple[str, tuple[Rule, ...]]:
        """(the name rules match, the rules) for an identifier's bytes, a driver function loaded through a pointer
        named after it (lazy_cuModuleLoad, pfn_cuTensorMapEncodeTiled) resolved to that function; ("", ()) for
        one no rule matches (one value kept for all of them: a repository names tens of thousands)."""
        found = self._raw_ids.get(raw)
        if found is None:
            name = raw.decode("utf-8", "replace")
            rules = self._matching(name)
            if not rules and (lazy := LAZY_SYMBOL.match(name)):
                name = lazy.group(1) or lazy.group(2)   # the prefixed form or the underscored one
                rules = self._matching(name)
            found = self._raw_ids[raw] = (name, rules) if rules else _NO_RULES
        return found

    def id_matches(self, nodes: list, raws: list[bytes]) -> Iterator[tuple[object, str, tuple[Rule, ...]]]:
        """(node, name, rules) of each identifier node some rule matches, given the nodes' bytes (rules_for_raw_id,
        its memo read here: a file has hundreds of thousands of identifiers, nearly all matching none)."""
        memo = self._raw_ids
        for node, raw in zip(nodes, raws):
            found = memo.get(raw)
            if found is None:
                found = self.rules_for_raw_id(raw)
            if found[1]:
                yield node, found[0], found[1]

    def rules_for_header(self, header: str) -> tuple[Rule, ...]:
        found = self._header_rules.get(header)
        if found is None:
            found = self._header_rules[header] = tuple(
                rule for pattern, rule in self.includes if fnmatch.fnmatchcase(header, pattern))
        return found

    def rules_for_id(self, name: str) -> tuple[Rule, ...]:
        found = self._id_rules.get(name)
        if found is None:
            found = self._id_rules[name] = self._matching(name)
        return found

    def _matching(self, name: str) -> tuple[Rule, ...]:
        exact = self.exact_ids.get(name, ())
        if self.any_glob is None or not self.any_glob.match(name):   # one regex for the many names no glob takes
            return exact
        return exact + tuple(rule for regex, rule in self.glob_ids if regex.match(name))

    def rules_for_qualified(self, text: str) -> tuple[tuple[str, Rule], ...]:
        found = self._qualified_rules.get(text)
        if found is None:
            name = _qualified_name(text)
            found = tuple((pattern, rule) for pattern, rule in self.qualified if _qualified_matches(pattern, name))
            self._qualified_rules[text] = found
        return found


def index_rules(rules: tuple[Rule, ...]) -> CudaRuleIndex:
    exact: dict[str, list[Rule]] = {}
    globs: list[tuple[re.Pattern, Rule]] = []
    qualified: list[tuple[str, Rule]] = []
    includes: list[tuple[str, Rule]] = []
    asm: list[tuple[re.Pattern, re.Pattern | None, Rule]] = []
    queries: list[Rule] = []
    calls: list[Rule] = []
    call_regexes: dict[str, re.Pattern] = {}
    for rule in rules:
        m = rule.cuda
        for pattern in m.identifiers:
            if "::" in pattern:
                qualified.append((pattern, rule))
            elif any(ch in pattern for ch in "*?["):
                globs.append((re.compile(fnmatch.translate(pattern)), rule))
            else:
                exact.setdefault(pattern, []).append(rule)
        includes.extend((pattern, rule) for pattern in m.includes)
        if m.asm is not None:
            unless = re.compile(m.unless_asm) if m.unless_asm is not None else None
            asm.append((re.compile(m.asm), unless, rule))
        if m.query is not None and (regex := ts_cuda.call_regex(m.query)) is not None:
            calls.append(rule)
            call_regexes[rule_key(rule)] = re.compile(regex)
        elif m.query is not None:
            queries.append(rule)
    return CudaRuleIndex(
        rules, {k: tuple(v) for k, v in exact.items()}, tuple(globs), tuple(qualified), tuple(includes),
        tuple(asm), tuple(queries), tuple(calls), call_regexes,
        re.compile("|".join(f"(?:{regex.pattern})" for regex, _ in globs)) if globs else None,
    )


def _qualified_name(text: str) -> str:
    """`std :: vector<int>` -> `std::vector`."""
    return re.sub(r"<.*", "", "".join(text.split()))


def _qualified_matches(pattern: str, text: str) -> bool:
    """`text` as _qualified_name gives it."""
    if any(ch in pattern for ch in "*?["):
        return fnmatch.fnmatchcase(text, pattern)
    return text == pattern or text.startswith(pattern + "::")
