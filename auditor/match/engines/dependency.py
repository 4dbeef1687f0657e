"""Match declared requirements, index URLs and imports against the dependency rules."""
from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from auditor.match.engines import make_finding
from auditor.types import Finding, Rule, Span
from auditor.parse.declared import Declared

if TYPE_CHECKING:
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

# packaging is imported where a requirement is parsed: compiling its regexes costs ~70 ms, which a run that
# reads no requirement (a warm run, a pre-commit hook on code only) does not pay.
NAME_ONLY = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?")
SEPARATORS = re.compile(r"[-_.]+")


def canonicalize_name(name: str) -> str:
    """PEP 503 normalisation, as packaging.utils.canonicalize_name does it."""
    return SEPARATORS.sub("-", name).lower()


@dataclass(frozen=True, slots=True)
class ParsedRequirement:
    name: str              # canonical
    extras: frozenset[str]
    specifier: SpecifierSet
    local_labels: tuple[str, ...]
    url: str = ""          # a PEP 508 direct reference (`pkg @ https://…whl`)


def parse_requirement(text: str) -> ParsedRequirement | None:
    from packaging.requirements import InvalidRequirement, Requirement

    text = text.strip()
    if not text or text.startswith(("-", "#", "git+", "http:", "https:", "file:", ".", "/")):
        return _from_url(text)
    try:
        req = Requirement(text)
    except InvalidRequirement:
        return _loose(text)
    labels = tuple(
        spec.version.split("+", 1)[1] for spec in req.specifier if "+" in spec.version
    )
    return ParsedRequirement(canonicalize_name(req.name), frozenset(req.extras), req.specifier, labels, req.url or "")


def _from_url(text: str) -> ParsedRequirement | None:
    """`pkg @ url` is handled by packaging; a bare VCS URL may name the package in #egg=."""
    from packaging.specifiers import SpecifierSet

    m = re.search(r"#egg=([A-Za-z0-9._-]+)", text)
    if m:
        return ParsedRequirement(canonicalize_name(m.group(1)), frozenset(), SpecifierSet(), ())
    return None


def _loose(text: str) -> ParsedRequirement | None:
    """Conda specs (`cudatoolkit=11.8`, `pytorch::pytorch-cuda=12.1`) and other near-PEP 508 text."""
    from packaging.specifiers import SpecifierSet

    text = text.split("::", 1)[-1]
    m = NAME_ONLY.match(text)
    if not m:
        return None
    extras = frozenset(e.strip() for e in (m.group(2) or "[]")[1:-1].split(",") if e.strip())
    version = re.search(r"[=<>~!]=?\s*([0-9][^,\s;]*)", text[m.end():])
    labels = (version.group(1).split("+", 1)[1],) if version and "+" in version.group(1) else ()
    return ParsedRequirement(canonicalize_name(m.group(1)), extras, SpecifierSet(), labels)


def pin_upper(spec: SpecifierSet) -> Version | None:
    """The highest version a requirement can resolve to, when it names one."""
    from packaging.version import InvalidVersion, Version

    best: Version | None = None
    for item in spec:
        if item.operator in ("==", "===", "~=", "<", "<="):
            try:
                version = Version(item.version.split("+", 1)[0].rstrip(".*"))
            except InvalidVersion:
                continue
            best = version if best is None or version < best else best
    return best


@cache
def _name_pattern(pattern: str) -> re.Pattern:
    return re.compile(fnmatch.translate(canonicalize_name(pattern.replace("*", "x7x")).replace("x7x", "*")))


def _names_match(patterns: Iterable[str], name: str) -> bool:
    return any(_name_pattern(p).match(name) for p in patterns)


def _exact_name(rule: Rule, name: str) -> bool:
    return any("*" not in p and canonicalize_name(p) == name for p in rule.dependency.pypi)


def match_requirement(rule: Rule, req: ParsedRequirement, where: str = "") -> str | None:
    """The subject when the rule applies to this requirement, else None."""
    m = rule.dependency
    if m.declared_in is not None and not re.search(m.declared_in, where):
        return None
    if m.pypi and _names_match(m.pypi, req.name):
        if m.extras and not any(fnmatch.fnmatch(e.lower(), p) for e in req.extras for p in m.extras):
            return None
        if m.versions is not None:
            from packaging.specifiers import SpecifierSet

            pinned = pin_upper(req.specifier)
            if pinned is None or pinned not in SpecifierSet(m.versions):
                return None
        return req.name
    if m.local_version is not None:
        for label in req.local_labels:
            if re.search(m.local_version, label):
                return f"{req.name}+{label}"
    return None


def requirement_findings(
    rules: Iterable[Rule], declared: Iterable[Declared], path: str, lines: list[str]
) -> Iterator[Finding]:
    from auditor.match.engines import snippet_of

    rules = list(rules)
    requirement_rules = [r for r in rules if r.dependency.pypi or r.dependency.local_version is not None]
    for item in declared:
        req = parse_requirement(item.text)
        if req is None:
            continue
        matched = [(rule, s) for rule in requirement_rules if (s := match_requirement(rule, req, item.where))]
        if any(_exact_name(rule, req.name) for rule, _ in matched):  # a rule naming the package beats a glob
            matched = [(rule, s) for rule, s in matched if _exact_name(rule, req.name) or not rule.dependency.pypi
                       or rule.dependency.declared_in is not None]
        if any(rule.dependency.declared_in is not None for rule, _ in matched):   # a rule for this context wins
            matched = [(rule, s) for rule, s in matched
                       if rule.dependency.declared_in is not None or not _exact_name(rule, req.name)]
        matched = _without_overridden(matched)
        if req.url:
            yield from url_findings(rules, [(req.url, item.line)], path, lines)
        for rule, subject in matched:
            if subject:
                span = Span(item.line, None, item.line)
                detail = f"declared in {item.where}" if item.where else ""
                yield make_finding(
                    rule, path, span, subject, snippet_of(lines, item.line) or item.text,
                    optional=item.optional, detail=detail,
                )


def _without_overridden(matched: list[tuple[Rule, str]]) -> list[tuple[Rule, str]]:
    """Where a rule declares that it overrides another that matched the same package, only it reports."""
    replaced = {rid for rule, _ in matched for rid in rule.dependency.overrides}
    return [(rule, s) for rule, s in matched if rule.id not in replaced]


def url_findings(
    rules: Iterable[Rule], urls: Iterable[tuple[str, int | None]], path: str, lines: list[str]
) -> Iterator[Finding]:
    from auditor.match.engines import snippet_of

    patterns = [(r, r.dependency.index_url) for r in rules if r.dependency.index_url is not None]
    for url, line in urls:
        for rule, pattern in patterns:
            if re.search(pattern, url):
                yield make_finding(rule, path, Span(line, None, line), url, snippet_of(lines, line) or url)


def import_rule_for(rules: Iterable[Rule], module: str) -> Iterator[tuple[Rule, str]]:
    """Rules whose `imports` cover this module path (the module itself or a parent of it)."""
    for rule in rules:
        for wanted in rule.dependency.imports:
            if module == wanted or module.startswith(wanted + "."):
                yield rule, wanted
                break
