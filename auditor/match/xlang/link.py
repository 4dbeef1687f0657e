"""The Python call sites of the ops the index names, found by the Python engine with a rule made from the
index (imports, aliases, `torch.ops` chains and ROCm guards are read as for any call rule), each reported with
the op and the library behind it."""
from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import partial

from auditor.match.engines.python import scan_python
from auditor.parse.python import PythonParseError, parse
from auditor.match.rulebook import Rulebook
from auditor.match.rulebook.context import ScanContext
from auditor.match.rulebook.schema import ExtensionMatch, PythonMatch
from auditor.types import LIVE, FileResult, Finding, Rule, Severity, Span
from auditor.match.xlang.builds import declared_extensions
from auditor.util.forked import map_in_children
from auditor.match.xlang.index import Op, build_index

WORD = re.compile(r"[A-Za-z_]\w*")
Reader = Callable[[str], "str | None"]     # a scanned file's text by its path (None: unreadable)


def link_ops(results: Sequence[FileResult], findings: Sequence[Finding], rules_in_force: Rulebook | ScanContext,
             read: Reader, carried: frozenset[str] = frozenset({LIVE}), jobs: int = 1) -> list[Finding]:
    """The findings of each `extension` rule: Python calls of ops whose implementation has a finding of one of
    the rule's categories, with a disposition in `carried`. `findings` carry their dispositions; `read` gives a
    Python file's text. A call of an op whose libraries are all optional (an opt-in extension) is as optional:
    `settled` keeps that once the call's own disposition is assigned. The Python files that call ops are parsed
    and scanned in up to `jobs` processes."""
    rulebook = ScanContext.of(rules_in_force)
    rules = rulebook.family("extension")
    if not rules or not any(r.facts.exports for r in results):
        return []
    python = [r.path for r in results if r.kind == "python"]
    texts = {path: text for path in python if (text := read(path)) is not None}
    extensions = [(path, e) for path, text in texts.items() for e in declared_extensions(text)]
    by_id = rulebook.by_id()
    out: list[Finding] = []
    for rule in rules:
        spec = rule.spec
        if not isinstance(spec, ExtensionMatch):
            continue
        wanted = [f for f in findings if f.severity >= Severity.parse(spec.library_severity)]
        ops = build_index(results, wanted, by_id, frozenset(spec.implemented_with), extensions, carried)
        if ops:
            out += _call_sites(rule, ops, texts, rulebook, jobs)
            out += _registrations(rule, ops, results, read)
    return out


def _registrations(rule: Rule, ops: Sequence[Op], results: Sequence[FileResult], read: Reader) -> list[Finding]:
    """The C++ side of each op: its registration (`m.def("op", &fn)`), at low severity, unless it already sits on
    a branch a ROCm build never compiles. Ports fence these (`#ifndef USE_ROCM` around TransformerEngine's
    `m.def("get_cublasLt_version", …)`) or bind a ROCm implementation there."""
    fenced = {(r.path, line) for r in results for line in r.facts.fenced_exports}
    lines_of: dict[str, list[str]] = {}
    out = []
    for op in ops:
        path, _, number = op.binding.rpartition(":")
        line = int(number)
        if (path, line) in fenced:
            continue
        if path not in lines_of:
            lines_of[path] = (read(path) or "").splitlines()
        text = lines_of[path][line - 1].strip() if line <= len(lines_of[path]) else ""
        libraries = _libraries(op)
        out.append(Finding(
            rule.id, path, Span(line), op.name, text[:200],
            "Registers for Python an op of the project's own extension whose implementation uses a CUDA-only "
            "library: a ROCm build must fence the registration or bind a ROCm implementation here.",
            Severity.LOW, detail=f"registers op {op.name}, implemented with {libraries} in {', '.join(op.units)}"))
    return out


def _call_sites(rule: Rule, ops: Sequence[Op], texts: Mapping[str, str], rulebook: ScanContext,
                jobs: int) -> list[Finding]:
    calls = tuple(sorted({c for op in ops for c in op.calls}))
    derived = replace(rule, spec=PythonMatch(calls=calls))
    names = frozenset(op.name for op in ops)
    # a call spells its module's last component (`tex` aliases `import fusedte_torch as tex`, which spells it)
    modules = frozenset(module.rsplit(".", 1)[-1] for op in ops for module in op.modules)
    by_call = sorted(((c.removesuffix(".*"), op) for op in ops for c in op.calls), key=lambda p: -len(p[0]))
    # a pure function of the rules as loaded, the rule made from the index and the file: kept with the rulebook, so
    # `history` scans a file again only when its text or the ops change (a file that spells no op has none)
    keys = {path: ("xlang call sites", derived, names, modules, path, hashlib.blake2b(text.encode(
        "utf-8", "surrogatepass"), digest_size=20).digest())
        for path, text in sorted(texts.items()) if _may_call(names, modules, text)}
    unscanned = [path for path, key in keys.items() if not rulebook.known(key)]
    sites = dict(zip(unscanned, map_in_children(lambda path: _sites_in(derived, path, texts[path], rulebook),
                                                unscanned, jobs)))
    out = []
    for path, key in keys.items():
        for f in rulebook.compiled(key, partial(sites.__getitem__, path)):
            op = next((o for prefix, o in by_call if _spells(f.subject, prefix)), None)
            if op is not None:
                out.append(_described(f, op, rule))
    return out


def _may_call(names: frozenset[str], modules: frozenset[str], text: str) -> bool:
    """The file spells one of the ops' modules and one of their names."""
    return any(module in text for module in modules) and not set(WORD.findall(text)).isdisjoint(names)


def _sites_in(derived: Rule, path: str, text: str, rulebook: ScanContext) -> tuple[Finding, ...]:
    try:
        tree = parse(text)
    except PythonParseError:
        return ()
    single = replace(rulebook.rulebook, rules=(derived,))     # a rulebook of the one rule made from the index
    return tuple(scan_python(tree, single, path, text.splitlines(), text.lower()).findings)


def _libraries(op: Op) -> str:
    """The CUDA-only libraries behind an op, each with the finding that names it."""
    return ", ".join(f"{lib.name} ({lib.rule_id} at {lib.where})" for lib in op.libraries)


def _spells(subject: str, call: str) -> bool:
    """Whether a call's qualified name is the op's `call` (`*.mod.op`: under any package), or an attribute of it."""
    if call.startswith("*."):
        return subject.endswith(call[1:])
    return subject == call or subject.startswith(call + ".")


def _described(finding: Finding, op: Op, rule: Rule) -> Finding:
    libraries = _libraries(op)
    units = ", ".join(op.units)
    via = f" through {' -> '.join(op.chain)}" if len(op.chain) > 1 else ""
    strongest = max(lib.severity for lib in op.libraries)
    severity = finding.severity if finding.guarded else min(rule.severity, strongest)
    described = replace(finding, severity=Severity(severity),
                        detail=f"calls op {op.name}, implemented with {libraries} in {units}{via} "
                               f"(registered at {op.binding})")
    if not any(lib.disposition == LIVE for lib in op.libraries):
        first = op.libraries[0]
        described = replace(described, disposition=first.disposition,
                            disposition_note=f"the op's implementation is {first.disposition} ({first.where})")
    return described


def settled(placed: Finding, linked: Finding) -> Finding:
    """A call's disposition once assigned like any finding's, but never more live than the op behind it."""
    if placed.disposition == LIVE and linked.disposition != LIVE:
        return replace(placed, disposition=linked.disposition, disposition_note=linked.disposition_note)
    return placed
