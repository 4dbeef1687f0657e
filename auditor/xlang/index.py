"""The op index: each op an extension registers, with the CUDA-only libraries of the translation unit that
defines its function and of the project headers that unit includes."""
from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from auditor.types import FileResult, Finding, Rule, Severity
from auditor.xlang.builds import Extension, names_file

MAX_HEADER_DEPTH = 4      # includes followed from a translation unit
MAX_HEADERS = 200         # files reached from one unit
CPP_KINDS = ("cuda", "cpp")


@dataclass(frozen=True, slots=True)
class Library:
    rule_id: str
    name: str           # the library rule's name (`cudnn`, `cublaslt`)
    where: str          # path:line of its finding
    severity: Severity
    disposition: str    # of that finding: a call of an op of an optional extension is as optional


@dataclass(frozen=True, slots=True)
class Op:
    modules: tuple[str, ...]        # the Python names of the module it is an attribute of (`pkg._C`, `torch.ops.ns`)
    name: str
    binding: str                    # path:line of its registration
    units: tuple[str, ...]          # the files that define its function (the binding file when none is known)
    libraries: tuple[Library, ...]

    @property
    def calls(self) -> tuple[str, ...]:
        """The qualified names a call of it spells (`torch.ops.ns.op.default(…)` too)."""
        out = []
        for module in self.modules:
            out.append(f"{module}.{self.name}")
            if module.startswith("torch.ops."):
                out.append(f"{module}.{self.name}.*")
        return tuple(out)


def build_index(results: Sequence[FileResult], findings: Sequence[Finding], rules: Mapping[str, Rule],
                categories: frozenset[str], extensions: Sequence[tuple[str, Extension]],
                carried: frozenset[str]) -> tuple[Op, ...]:
    """`findings`: the report's, with their dispositions; only those in `carried` (live, optional...) make an op
    CUDA-only (not one the ROCm build does not compile, or compiles another source for). `extensions`: (build
    script path, declaration) of every build script."""
    cpp = {r.path: r for r in results if r.kind in CPP_KINDS}
    bindings = [(r.path, e) for r in cpp.values() for e in r.facts.exports]
    if not bindings:
        return ()
    libraries: dict[str, dict[str, Library]] = {}
    for f in findings:
        rule = rules.get(f.rule_id)
        if rule is not None and rule.category in categories and f.path in cpp and f.disposition in carried:
            libraries.setdefault(f.path, {}).setdefault(rule.name, Library(
                rule.id, rule.name, f"{f.path}:{f.span.line or 0}", f.severity, f.disposition))
    if not libraries:
        return ()
    defined: dict[str, list[str]] = {}
    for path, result in cpp.items():
        for name in result.facts.functions:
            defined.setdefault(name, []).append(path)
    literals = {module for _, (module, _, _, _) in bindings if module and not module.startswith("torch.ops.")}
    claimed = {e.name for script, e in extensions
               if e.name in literals or e.name.rsplit(".", 1)[-1] in literals
               or any(names_file(s, path, posixpath.dirname(script)) for path in cpp for s in e.sources
                      if cpp[path].facts.exports)}
    unclaimed = tuple(sorted({e.name for _, e in extensions} - claimed))
    merged: dict[tuple[tuple[str, ...], str], tuple[str, set[str], set[str]]] = {}
    for path, (module, op, function, line) in bindings:
        modules = _modules(module, path, extensions, unclaimed)
        entry = merged.setdefault((modules, op), (f"{path}:{line}", set(), set()))
        entry[1].update(_units(function, path, defined, extensions) or {path})
        entry[2].update(p for script, e in extensions if _lists(e, script, path) for p in cpp if _lists(e, script, p))
    out = []
    for (modules, op), (binding, units, listed) in sorted(merged.items()):
        if not modules:
            continue
        # the units that define the bound function; when none of them uses a library, the extension's other
        # listed sources, which a thin wrapper calls into (`fwd` -> `fwd_cuda` in the extension's .cu)
        for candidates in (units, listed):
            found = _libraries(candidates, cpp, libraries)
            if found:
                out.append(Op(modules, op, binding, tuple(sorted({lib.where.rsplit(":", 1)[0] for lib in found})),
                              tuple(found)))
                break
    return tuple(out)


def _lists(extension: Extension, script: str, path: str) -> bool:
    return any(names_file(s, path, posixpath.dirname(script)) for s in extension.sources)


def _libraries(units: set[str], cpp: Mapping[str, FileResult],
               libraries: Mapping[str, Mapping[str, Library]]) -> list[Library]:
    found: dict[str, Library] = {}
    for unit in sorted(units):
        for reached in _reach(unit, cpp):
            for name, library in libraries.get(reached, {}).items():
                found.setdefault(name, library)
    return list(found.values())


def _modules(module: str, path: str, extensions: Sequence[tuple[str, Extension]],
             unclaimed: tuple[str, ...]) -> tuple[str, ...]:
    """The Python names a registration block's module goes by: the extension whose sources name the file, a
    literal name (or a declared extension it is the last part of), else each extension the build declares
    whose sources name no registration file (its sources computed at build time)."""
    ops_prefix = "torch.ops." if module.startswith("torch.ops.") else ""
    literal = module.removeprefix("torch.ops.")
    if ops_prefix and literal:
        return (module,)
    named = [e.name for script, e in extensions
             if any(names_file(s, path, posixpath.dirname(script)) for s in e.sources)]
    if literal:
        named += [e.name for _, e in extensions if e.name == literal or e.name.endswith("." + literal)]
        named = named or [literal]
    names = tuple(sorted(set(named))) or unclaimed
    return tuple(ops_prefix + (n.rsplit(".", 1)[-1] if ops_prefix else n) for n in names)


def _units(function: str, binding: str, defined: Mapping[str, list[str]],
           extensions: Sequence[tuple[str, Extension]]) -> set[str]:
    """The files that define the bound function: among the sources of the binding's extension when the build
    lists them, else under the binding file's directory."""
    where = defined.get(function, []) if function else []
    sources = [e for script, e in extensions
               if any(names_file(s, binding, posixpath.dirname(script)) for s in e.sources)]
    listed = {p for p in where if any(names_file(s, p, posixpath.dirname(script))
                                      for script, e in extensions if e in sources for s in e.sources)}
    folder = posixpath.dirname(binding)
    return listed or {p for p in where if not folder or p.startswith(folder + "/")}


def _reach(unit: str, cpp: Mapping[str, FileResult]) -> list[str]:
    """The unit and the project headers it includes, followed a few levels: an include is looked up beside the
    including file, then in each directory above it (where a build's include directory usually is)."""
    seen = [unit]
    frontier = [unit]
    for _ in range(MAX_HEADER_DEPTH):
        following = []
        for path in frontier:
            for include in cpp[path].facts.includes:
                header = _resolve(path, include, cpp)
                if header and header not in seen and len(seen) < MAX_HEADERS:
                    seen.append(header)
                    following.append(header)
        frontier = following
    return seen


def _resolve(includer: str, include: str, cpp: Mapping[str, FileResult]) -> str | None:
    folder = posixpath.dirname(includer)
    while True:
        candidate = posixpath.normpath(posixpath.join(folder, include)) if folder else posixpath.normpath(include)
        if candidate in cpp:
            return candidate
        if not folder:
            return None
        folder = posixpath.dirname(folder)
