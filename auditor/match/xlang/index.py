"""The op index: each op an extension registers, with the CUDA-only libraries of the translation unit that
defines its function and of the project headers that unit includes."""
from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from auditor.types import FileResult, Finding, Rule, Severity
from auditor.match.xlang.builds import Extension, names_file

MAX_HEADER_DEPTH = 4      # includes followed from a translation unit
MAX_HEADERS = 200         # files reached from one unit
MAX_CALL_DEPTH = 5        # calls followed from a bound function to the unit that uses a library
MAX_FUNCTIONS = 500       # names followed for one op
CPP_KINDS = ("cuda", "cpp")
Definition = tuple[str, tuple[int, int], tuple[str, ...]]   # (file, its lines, the names it calls)


@dataclass(frozen=True, slots=True)
class Library:
    rule_id: str
    name: str           # the library rule's name (`cudnn`, `cublaslt`)
    where: str          # path:line of its finding
    severity: Severity
    disposition: str    # of that finding: a call of an op of an optional extension is as optional

    @property
    def line(self) -> int:
        return int(self.where.rsplit(":", 1)[1])


@dataclass(frozen=True, slots=True)
class Op:
    modules: tuple[str, ...]        # the Python names of the module it is an attribute of (`pkg._C`, `torch.ops.ns`)
    name: str
    binding: str                    # path:line of its registration
    units: tuple[str, ...]          # the files with the library use: its function's, or a callee's a few calls deep
    libraries: tuple[Library, ...]
    chain: tuple[str, ...] = ()     # the calls from the bound function to the first unit's library use

    @property
    def calls(self) -> tuple[str, ...]:
        """The qualified names a call of it spells (`torch.ops.ns.op.default(…)` too; a one-word module,
        `PYBIND11_MODULE(te_jax, m)`, also under the package the build installs it in: `pkg.te_jax.op`)."""
        out = []
        for module in self.modules:
            out.append(f"{module}.{self.name}")
            if module.startswith("torch.ops."):
                out.append(f"{module}.{self.name}.*")
            elif "." not in module:
                out.append(f"*.{module}.{self.name}")
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
    libraries: dict[str, dict[str, list[Library]]] = {}
    for f in findings:
        rule = rules.get(f.rule_id)
        if rule is not None and rule.category in categories and f.path in cpp and f.disposition in carried \
                and not f.snippet.lstrip().startswith("#"):   # a library used, not only included
            libraries.setdefault(f.path, {}).setdefault(rule.name, []).append(Library(
                rule.id, rule.name, f"{f.path}:{f.span.line or 0}", f.severity, f.disposition))
    if not libraries:
        return ()
    defined: dict[str, list[Definition]] = {}
    for path, result in cpp.items():
        for name, first, last, callees in result.facts.functions:
            defined.setdefault(name, []).append((path, (first, last), callees))
    listed = _listed(extensions, cpp)
    memo: dict[str, list[str]] = {}   # each unit's reach through includes
    literals = {module for _, (module, _, _, _) in bindings if module and not module.startswith("torch.ops.")}
    bound_files = {path for path, _ in bindings}
    claimed = {e.name for (_, e), files in zip(extensions, listed)
               if e.name in literals or e.name.rsplit(".", 1)[-1] in literals or files & bound_files}
    unclaimed = tuple(sorted({e.name for _, e in extensions} - claimed))
    merged: dict[tuple[tuple[str, ...], str], tuple[str, set[str], set[str]]] = {}
    for path, (module, op, function, line) in bindings:
        modules = _modules(module, path, extensions, listed, unclaimed)
        entry = merged.setdefault((modules, op), (f"{path}:{line}", set(), set()))
        if function:
            entry[1].add(function)
        entry[2].add(path)
    out = []
    for (modules, op), (binding, functions, bound_in) in sorted(merged.items()):
        if not modules:
            continue
        scope = _scope(frozenset(bound_in), cpp, listed)
        found = _traced(functions, scope, defined, cpp, libraries, memo) if functions else {}
        if not functions:   # a schema with no implementation in view: the registering file itself
            found = {p: (libs, ()) for p in bound_in if (libs := _libraries({p}, cpp, libraries, memo))}
        if found:
            units = tuple(sorted(found))
            named = {lib.name: lib for unit in units for lib in found[unit][0]}
            out.append(Op(modules, op, binding, units, tuple(named.values()), found[units[0]][1]))
    return tuple(out)


def _listed(extensions: Sequence[tuple[str, Extension]], cpp: Mapping[str, FileResult]) -> list[frozenset[str]]:
    """The scanned files each declared extension lists as its sources (looked up by file name first)."""
    by_name: dict[str, list[str]] = {}
    for path in cpp:
        by_name.setdefault(posixpath.basename(path), []).append(path)
    return [frozenset(p for s in e.sources for p in by_name.get(posixpath.basename(s), ())
                      if names_file(s, p, posixpath.dirname(script))) for script, e in extensions]


def _scope(bound_in: frozenset[str], cpp: Mapping[str, FileResult], listed: Sequence[frozenset[str]]) -> frozenset[str]:
    """Where an op's implementation may be: the sources the build lists for the registering file's extension,
    and the files under the registering file's directory."""
    sources = {p for files in listed if files & bound_in for p in files}
    folders = {posixpath.dirname(b) for b in bound_in}
    return frozenset(sources | {p for p in cpp if any(not f or p.startswith(f + "/") for f in folders)})


Uses = Mapping[str, Mapping[str, list[Library]]]   # file -> library name -> its uses there
Found = tuple[list[Library], tuple[str, ...]]      # a unit's libraries, and the calls that reach them


def _traced(functions: set[str], scope: frozenset[str], defined: Mapping[str, list[Definition]],
            cpp: Mapping[str, FileResult], libraries: Uses, memo: dict[str, list[str]]) -> dict[str, Found]:
    """The units with a library use that define the bound functions or what they call, a few calls deep (a
    binding's thin wrapper `fwd` calls `fwd_cuda` in the extension's .cu, or `nvte_fwd` in the project's core
    library, which calls the cuDNN code of another of its units), each with the chain of calls that reaches it: a
    unit whose library use is found is not followed further, and no function is followed twice (no cycles)."""
    found: dict[str, Found] = {}
    caller: dict[str, str] = {}
    seen = set(functions)
    frontier = sorted(functions)
    for depth in range(MAX_CALL_DEPTH):
        following: list[str] = []
        for name in frontier:
            definitions = defined.get(name, ())
            for path, lines, callees in definitions:
                # a callee outside the extension (a C API of the project's core library, and what that calls)
                # only when every definition of its name is in one file: an overloaded name is not followed
                if path not in scope and (depth == 0 or len({d[0] for d in definitions}) != 1):
                    continue
                libs = _libraries({path}, cpp, libraries, memo, lines)
                if libs:
                    found.setdefault(path, (libs, _chain(name, caller)))
                    continue
                for callee in callees:
                    if callee not in seen and len(seen) < MAX_FUNCTIONS:
                        seen.add(callee)
                        caller[callee] = name
                        following.append(callee)
        frontier = following
    return found


def _chain(name: str, caller: Mapping[str, str]) -> tuple[str, ...]:
    """The calls from a bound function to `name` (`fused_attn_fwd`, `nvte_fused_attn_fwd`, …)."""
    chain = [name]
    while chain[-1] in caller and len(chain) <= MAX_CALL_DEPTH:
        chain.append(caller[chain[-1]])
    return tuple(reversed(chain))


def _libraries(units: set[str], cpp: Mapping[str, FileResult], libraries: Uses, memo: dict[str, list[str]],
               lines: tuple[int, int] | None = None) -> list[Library]:
    """The libraries the units use, with the headers they include; within a unit, only inside `lines` (the
    function followed) when given: a library another function of the same file uses is not this one's."""
    found: dict[str, Library] = {}
    for unit in sorted(units):
        for reached in _reach(unit, cpp, memo):
            for name, uses in libraries.get(reached, {}).items():
                for library in uses:
                    if reached != unit or lines is None or lines[0] <= library.line <= lines[1]:
                        found.setdefault(name, library)
                        break
    return list(found.values())


def _modules(module: str, path: str, extensions: Sequence[tuple[str, Extension]], listed: Sequence[frozenset[str]],
             unclaimed: tuple[str, ...]) -> tuple[str, ...]:
    """The Python names a registration block's module goes by: the extension whose sources name the file, a
    literal name (or a declared extension it is the last part of), else each extension the build declares
    whose sources name no registration file (its sources computed at build time)."""
    ops_prefix = "torch.ops." if module.startswith("torch.ops.") else ""
    literal = module.removeprefix("torch.ops.")
    if ops_prefix and literal:
        return (module,)
    named = [e.name for (_, e), files in zip(extensions, listed) if path in files]
    if literal:
        named += [e.name for _, e in extensions if e.name == literal or e.name.endswith("." + literal)]
        named = named or [literal]
    names = tuple(sorted(set(named))) or unclaimed
    return tuple(ops_prefix + (n.rsplit(".", 1)[-1] if ops_prefix else n) for n in names)


def _reach(unit: str, cpp: Mapping[str, FileResult], memo: dict[str, list[str]]) -> list[str]:
    """The unit and the project headers it includes, followed a few levels: an include is looked up beside the
    including file, then in each directory above it (where a build's include directory usually is); `memo`
    keeps each unit's for one index."""
    if unit not in memo:
        memo[unit] = _reached(unit, cpp)
    return memo[unit]


def _reached(unit: str, cpp: Mapping[str, FileResult]) -> list[str]:
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
