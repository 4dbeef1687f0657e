"""Imports of the project's own modules that cannot be imported on ROCm.

A module fails at import on ROCm when code it runs at import time does something only CUDA has: a module-level,
unguarded import of a CUDA-only package, a module-level call that loads a CUDA library (`ctypes.CDLL(...)`), or
a module-level call of a function or class of the module whose body does (vLLM's `cudart = CudaRTLibrary()`).
A module that imports such a module unconditionally (an unindented import statement) fails with it, and so on
up the chain: each importer is reported at its import line with the chain. Imports under `try: ... except
ImportError`, in a branch or in a function are not followed. The root cause is reported once, where it is;
the importers are its symptoms, at the rule's (info) severity, grouped by the root (their subject), so one cause
does not count as many. The walk is breadth-first over modules, each visited once (import cycles end), at most
MAX_DEPTH imports from a root."""
from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from auditor.match.engines import make_finding
from auditor.parse.pyimports import absolute, import_time_lines
from auditor.parse.python import PythonParseError, parse
from auditor.match.rulebook import Rulebook
from auditor.match.rulebook.context import ScanContext
from auditor.match.rulebook.schema import ImportChainMatch
from auditor.types import LIVE, FileResult, Finding, Rule, Severity, Span
from auditor.util.purepaths import pure

MAX_DEPTH = 8
TRIPLE = re.compile(r'"""|\'\'\'')
IMPORT_LINE = re.compile(r"(?:from[ \t]+[\w.]+[ \t]+import|import[ \t]+\w)")
Reader = Callable[[str], "str | None"]


@dataclass(frozen=True, slots=True)
class Failing:
    """A module that cannot be imported on ROCm: the finding at the root of it and the chain of files to it."""

    root: Finding
    chain: tuple[str, ...]            # importer ... root file


def link_imports(results: Sequence[FileResult], findings: Sequence[Finding], rules_in_force: Rulebook | ScanContext,
                 read: Reader, carried: frozenset[str] = frozenset({LIVE})) -> list[Finding]:
    """The findings of each `importchain` rule: unconditional imports of the project's modules that fail at
    import on ROCm because of a finding of the rule's categories with a disposition in `carried`."""
    rulebook = ScanContext.of(rules_in_force)
    rules = rulebook.family("importchain")
    # a file the scan could not read or parse (over the memory ceiling, say) is never parsed again here
    python = sorted(r.path for r in results if r.kind == "python" and r.error is None)
    if not rules or not python:
        return []
    names = module_names(python)
    categories = {rule_id: rule.category for rule_id, rule in rulebook.by_id().items()}
    trees = _Trees(read)
    # what each file may import, from the scan's own parse (FileFacts.imports, a superset of the unconditional
    # imports read here): only a file that may import a failing module is parsed again, for its lines
    may_import = {r.path: frozenset(absolute(i, names[r.path], r.path.endswith("__init__.py")) for i in r.facts.imports)
                  for r in results if r.path in names}
    out: list[Finding] = []
    for rule in rules:
        spec = rule.spec
        if not isinstance(spec, ImportChainMatch):
            continue
        wanted = [f for f in findings if f.path in names and not f.guarded and f.disposition in carried
                  and categories.get(f.rule_id) in spec.fails_with and f.severity >= Severity.parse(spec.root_severity)]
        roots = _roots(wanted, trees, rulebook, {r.path: r for r in results})
        if roots:
            out += _importers(rule, roots, names, may_import, trees)
    return out


def module_names(paths: Iterable[str]) -> dict[str, str]:
    """Each Python file's dotted module name, from the outermost directory of its package chain (a directory with
    an `__init__.py`); a package's `__init__.py` is the package."""
    files = set(paths)
    out = {}
    for path in files:
        parts = list(pure(path).with_suffix("").parts)
        top = len(parts) - 1
        while top > 0 and "/".join(parts[:top]) + "/__init__.py" in files:
            top -= 1
        dotted = parts[top:-1] if parts[-1] == "__init__" else parts[top:]
        if dotted:
            out[path] = ".".join(dotted)
    return out


class _Trees:
    """Parsed files, each parsed at most once per call of link_imports."""

    def __init__(self, read: Reader):
        self.read = read
        self.text: dict[str, str | None] = {}
        self.trees: dict[str, ast.Module | None] = {}

    def source(self, path: str) -> str | None:
        if path not in self.text:
            self.text[path] = self.read(path)
        return self.text[path]

    def module(self, path: str) -> ast.Module | None:
        if path not in self.trees:
            text = self.source(path)
            try:
                self.trees[path] = parse(text).module if text is not None else None
            except PythonParseError:
                self.trees[path] = None
        return self.trees[path]


def _roots(wanted: Sequence[Finding], trees: _Trees, rulebook: ScanContext,
           results: Mapping[str, FileResult]) -> dict[str, Failing]:
    """The files whose import-time code holds one of `wanted`, each with its first such finding."""
    by_path: dict[str, list[Finding]] = {}
    for f in wanted:
        by_path.setdefault(f.path, []).append(f)
    roots = {}
    for path, found in sorted(by_path.items()):
        lines = _import_time_lines_of(trees, results[path], rulebook)
        if lines is None:
            continue
        hit = next((f for f in sorted(found, key=Finding.sort_key) if f.span.line in lines), None)
        if hit is not None:
            roots[path] = Failing(hit, (path,))
    return roots


def _import_time_lines_of(trees: _Trees, result: FileResult, rulebook: ScanContext) -> frozenset[int] | None:
    """A file's import-time lines (None: unreadable or unparsable): from the scan's own parse (FileFacts), else
    parsed here, kept with the rulebook under the text's digest (`history` parses a file again only when its text
    changed)."""
    if result.facts.import_time is not None:
        return frozenset(line for first, last in result.facts.import_time for line in range(first, last + 1))
    path = result.path
    text = trees.source(path)
    if text is None:
        return None
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=20).digest()

    def lines() -> frozenset[int] | None:
        module = trees.module(path)
        return None if module is None else frozenset(import_time_lines(module))
    return rulebook.compiled(("import-time lines", digest), lines)


def _import_sites(path: str, module_name: str, text: str) -> list[tuple[int, tuple[str, ...]]]:
    """Each import statement at the module's top level (unindented: not in a branch, a `try`, a function), with
    the absolute module names it may load. Read from the lines, each statement parsed alone: cheaper than parsing
    every importer again."""
    is_package = path.endswith("__init__.py")
    lines = text.splitlines()
    out = []
    i = 0
    quote = ""    # the triple quote of a string the line is inside ("" when it is code)
    while i < len(lines):
        if quote or not IMPORT_LINE.match(lines[i]):
            quote = _quote_after(lines[i], quote)
            i += 1
            continue
        end = i
        chunk = lines[i]
        while (chunk.count("(") > chunk.count(")") or chunk.endswith("\\")) and end + 1 < min(len(lines), i + 200):
            end += 1
            chunk += "\n" + lines[end]
        node = _statement(chunk)
        if isinstance(node, ast.Import):
            out.append((i + 1, tuple(alias.name for alias in node.names)))
        elif isinstance(node, ast.ImportFrom):
            target = absolute("." * node.level + (node.module or ""), module_name, is_package)
            subs = tuple(f"{target}.{a.name}" if target else a.name for a in node.names if a.name != "*")
            out.append((i + 1, (target, *subs) if target else subs))
        i = end + 1
    return out


def _quote_after(line: str, quote: str) -> str:
    """The triple-quoted string open at the end of `line`, given the one open at its start."""
    for match in TRIPLE.finditer(line):
        if not quote:
            quote = match.group(0)
        elif match.group(0) == quote:
            quote = ""
    return quote


def _statement(chunk: str) -> ast.stmt | None:
    try:
        body = ast.parse(chunk).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return body[0] if len(body) == 1 else None


def _importers(rule: Rule, roots: dict[str, Failing], names: Mapping[str, str],
               may_import: Mapping[str, frozenset[str]], trees: _Trees) -> list[Finding]:
    failing: dict[str, Failing] = dict(roots)
    frontier = dict(roots)
    out: list[Finding] = []
    for _ in range(MAX_DEPTH):
        failing_names = {names[p]: p for p in frontier}
        found: dict[str, Failing] = {}
        for path, name in sorted(names.items()):
            if path in failing or may_import.get(path, frozenset()).isdisjoint(failing_names):
                continue
            for line, loaded in _import_sites(path, name, trees.source(path) or ""):
                hit = next((failing_names[m] for m in loaded if m in failing_names), None)
                if hit is None:
                    continue
                cause = failing[hit]
                out.append(_symptom(rule, path, line, names[hit], cause, trees))
                found.setdefault(path, Failing(cause.root, (path, *cause.chain)))
        if not found:
            break
        failing.update(found)
        frontier = found
    return out


def _symptom(rule: Rule, path: str, line: int, imported: str, cause: Failing, trees: _Trees) -> Finding:
    root = cause.root
    text = (trees.source(path) or "").splitlines()
    snippet = text[line - 1].strip() if 0 < line <= len(text) else ""
    chain = " -> ".join((path, *cause.chain))
    finding = make_finding(rule, path, Span(line, None, line), root.path, snippet,
                           detail=f"imports {imported}, which cannot be imported on ROCm: {chain} "
                                  f"({root.rule_id} at {root.path}:{root.span.line}: {root.subject})")
    if root.disposition != LIVE:
        finding = replace(finding, disposition=root.disposition,
                          disposition_note=f"the module it imports is {root.disposition} ({root.path})")
    return finding
