"""Python engine: imports, qualified-name references and calls, string literals, guards."""
from __future__ import annotations

import ast
import fnmatch
from collections.abc import Callable, Sequence
from typing import Any
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from auditor.match.engines import make_finding, snippet_of
from auditor.match.engines.dependency import import_rule_for
from auditor.parse.declared import Declared
from auditor.parse.pyimports import absolute
from auditor.match.engines.python.callers import helper_calls
from auditor.match.engines.python.capability import CapabilitySites
from auditor.match.engines.python.contexts import SyntacticContexts
from auditor.match.engines.python.setupreqs import SetupRequirements, module_bindings
from auditor.match.engines.python.guards import Pos, end_of, GuardedRegions, start_of, string_value
from auditor.match.engines.python.names import attribute_names, compiled_regex, pattern_matches
from auditor.parse.python import PythonTree
from auditor.match.engines.python.cudasource import is_cuda_source
from auditor.match.rulebook.prefilter import Haystack, rules_present
from auditor.match.rulebook import Rulebook
from auditor.match.rulebook.context import ScanContext
from auditor.types import Finding, Rule, Span

# Calls whose string argument is CUDA source compiled at run time: (keyword, position) of that argument.
EMBEDDED_CUDA_CALLS = {
    "torch.utils.cpp_extension.load_inline": ("cuda_sources", None),
    "cupy.RawKernel": ("code", 0),
    "cupy.RawModule": ("code", 0),
    "cupy.ElementwiseKernel": ("operation", 2),
    "cupy.ReductionKernel": ("map_expr", 2),
    "pycuda.compiler.SourceModule": ("source", 0),
}
CPP_EXTENSION_CALLS = {
    "torch.utils.cpp_extension.CUDAExtension", "torch.utils.cpp_extension.load",
    "torch.utils.cpp_extension.load_inline",
}
# findings a handled load or probe failure makes harmless on ROCm (a library load, a toolkit probe)
TOLERATED = frozenset({"cuda_only_library", "build_system"})
DISTRIBUTION_LOOKUPS = frozenset({"importlib.metadata.distribution", "importlib.metadata.version",
                                  "importlib.metadata.metadata", "importlib_metadata.distribution",
                                  "importlib_metadata.version", "pkg_resources.get_distribution",
                                  "pkg_resources.require"})
@dataclass(frozen=True, slots=True)
class EmbeddedCuda:
    code: str
    first_line: int       # line of the file where line 1 of `code` sits


@dataclass
class PythonScan:
    findings: list[Finding] = field(default_factory=list)
    embedded: list[EmbeddedCuda] = field(default_factory=list)
    declared: list[Declared] = field(default_factory=list)
    uses_cpp_extension: bool = False
    guarded_regions: list[tuple[Pos, Pos]] = field(default_factory=list)

    def guarded(self, line: int) -> bool:
        return any(start[0] <= line <= end[0] for start, end in self.guarded_regions)


class _Engine(SyntacticContexts, SetupRequirements):
    def __init__(self, tree: PythonTree, rulebook: ScanContext, path: str, lines: list[str],
                 lowered: str | Haystack | None, module: str | None = None):
        self.tree = tree
        self.path = path
        self.module = module
        self.lines = lines
        self.is_setup = PurePosixPath(path).name == "setup.py"
        dependency_rules = tuple(r for r in rulebook.family("dependency") if r.dependency.imports)
        python_rules = tuple(r for r in rulebook.family("python") if self._applies(r))
        if lowered is not None:   # only the rules whose needles the file contains can match it
            present = set(rules_present(dependency_rules + python_rules, lowered))
            dependency_rules = tuple(r for r in dependency_rules if r in present)
            python_rules = tuple(r for r in python_rules if r in present)
        self.dependency_rules = list(dependency_rules)
        self.call_rules = [r for r in python_rules if r.python.calls]
        self.name_rules = [r for r in python_rules if r.python.names]
        self.string_rules = [r for r in python_rules if r.python.strings is not None]
        self.name_attrs = attribute_names(self.name_rules)
        self.bare_name_hits: dict[str, tuple[tuple[Rule, str], ...]] = {}
        self.guards = GuardedRegions(tree, rulebook.guards.python)
        self.raw: list[tuple[Rule, ast.AST, str, str, int | None]] = []  # rule, node, subject, kind, line
        self.module_strings: dict[str, ast.AST] = {}
        self.module_bindings: dict[str, list[ast.AST]] = {}   # setup.py: every module-level value of a name
        self.scan = PythonScan()
        self.capability_sites: CapabilitySites | None = None

    def _applies(self, rule: Rule) -> bool:
        files = rule.python.files
        return not files or any(fnmatch.fnmatch(PurePosixPath(self.path).name, f) for f in files)

    def run(self) -> PythonScan:
        module = self.tree.module
        for stmt in module.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                self.module_strings[stmt.targets[0].id] = stmt.value
        if self.is_setup:
            self.module_bindings = module_bindings(module)
        nodes = self.tree.nodes
        for node in nodes:
            handler = _MATCHERS.get(type(node))
            if handler:
                handler(self, node)
        self._report_callers()
        if not self.raw and not self.scan.embedded and not self.scan.declared:
            return self.scan   # nothing to judge: the guards (most of a file's branches) need not be read
        for node in nodes:
            handler = _GUARD_READERS.get(type(node))
            if handler:
                handler(self, node)
            body = getattr(node, "body", None)
            if isinstance(body, list):
                self.guards.visit_block(body)
                orelse = getattr(node, "orelse", None)
                if isinstance(orelse, list) and orelse:
                    self.guards.visit_block(orelse)
        self.scan.findings.extend(self._findings())
        self.scan.guarded_regions = self.guards.regions
        return self.scan

    # -- imports --------------------------------------------------------------------------------
    def _import(self, node: ast.AST, module: str) -> bool:
        best: tuple[Rule, str] | None = None
        for rule, wanted in import_rule_for(self.dependency_rules, module):
            if best is None or len(wanted) > len(best[1]) or (
                    len(wanted) == len(best[1]) and best[0].id in rule.dependency.overrides):
                best = (rule, wanted)
        if best:
            self.raw.append((best[0], node, best[1], "import", None))
        return best is not None

    def on_import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._import(node, alias.name)

    def on_import_from(self, node: ast.ImportFrom) -> None:
        # `from . import gpu` in the module `pkg.functions.f` is the project's own `pkg.functions.gpu`, read so only
        # when the file's module name is known
        target = node.module if not node.level else None if self.module is None else \
            absolute("." * node.level + (node.module or ""), self.module, self.path.endswith("__init__.py"))
        if not target:
            return
        if target.startswith("torch.utils.cpp_extension"):
            self.scan.uses_cpp_extension = True
        candidates = [f"{target}.{a.name}" for a in node.names if a.name != "*"] + [target]
        for candidate in candidates:
            if self._import(node, candidate):
                break

    # -- guards ---------------------------------------------------------------------------------
    def on_if(self, node: ast.If | ast.While) -> None:
        self.guards.visit_branch(node.test, node.body, node.orelse)
        self.guards.visit_availability(node.test, node.body, node.orelse)
        if isinstance(node, ast.If):
            self.guards.visit_elif_chain(node)

    def on_ifexp(self, node: ast.IfExp) -> None:
        self.guards.visit_ifexp(node)

    def on_boolop(self, node: ast.BoolOp) -> None:
        self.guards.visit_boolop(node)

    def on_try(self, node: ast.Try) -> None:
        self.guards.visit_try(node)

    # -- calls ----------------------------------------------------------------------------------
    def on_call(self, node: ast.Call) -> None:
        names = self.tree.names.of(node.func)
        for rule in self.call_rules:
            hit = pattern_matches(rule.python.calls, names)
            if hit and self._keywords_ok(rule, node) and self._argument_ok(rule, node) \
                    and self._context_ok(rule, node) and self._inside_ok(rule, node):
                self.raw.append((rule, node, hit, "code", None))
        if "importlib.import_module" in names and node.args:
            value = string_value(node.args[0])
            if value:
                self._import(node, value)
        if names & CPP_EXTENSION_CALLS:
            self.scan.uses_cpp_extension = True
        for name in names & EMBEDDED_CUDA_CALLS.keys():
            self._embedded(node, *EMBEDDED_CUDA_CALLS[name])
        if self.is_setup:
            self._setup_requirements(node)
            self._built_requirement_list(node)
        if names & DISTRIBUTION_LOOKUPS and node.args:
            distribution = string_value(node.args[0])
            if distribution:   # importlib.metadata.version("nvidia-cudnn-cu12"): the code needs that distribution
                self.scan.declared.append(Declared(distribution, node.lineno, False, "a distribution look-up"))

    @staticmethod
    def _keywords_ok(rule: Rule, node: ast.Call) -> bool:
        wanted = rule.python.keywords
        return not wanted or any(kw.arg in wanted for kw in node.keywords)

    @staticmethod
    def _argument_ok(rule: Rule, node: ast.Call) -> bool:
        """`_jit_set_nvfuser_enabled(False)` switches the feature off: harmless where switching it on is not."""
        harmless = rule.python.unless_argument
        return not harmless or not node.args or ast.unparse(node.args[0]) not in harmless

    def _embedded(self, node: ast.Call, keyword: str, position: int | None) -> None:
        given: ast.AST | None = next((kw.value for kw in node.keywords if kw.arg == keyword), None)
        if given is None and position is not None and len(node.args) > position:
            given = node.args[position]
        value = self._resolve(given)
        items = value.elts if isinstance(value, (ast.List, ast.Tuple)) else [value] if value is not None else []
        for entry in items:
            item = self._resolve(entry)
            if isinstance(item, ast.Constant) and isinstance(item.value, str):
                self.scan.embedded.append(EmbeddedCuda(item.value, item.lineno))

    # -- names ----------------------------------------------------------------------------------
    def on_reference(self, node: ast.Name | ast.Attribute) -> None:
        if not self.name_rules:
            return
        if self.name_attrs is not None and isinstance(node, ast.Attribute) and node.attr not in self.name_attrs:
            return
        hits = self._name_hits(node)
        if not hits:
            return
        outer = None
        for rule, hit in hits:
            if outer is None:
                parent = self.tree.parent(node)
                outer = self.tree.names.of(parent) \
                    if isinstance(parent, ast.Attribute) and parent.value is node else frozenset()
            if outer and pattern_matches(rule.python.names, outer):
                continue  # report the outermost matching name only
            if rule.python.capability:
                self._capability_decisions(rule, node, hit)
            elif self._context_ok(rule, node) and self._inside_ok(rule, node):
                self.raw.append((rule, node, hit, "code", None))

    def _name_hits(self, node: ast.Name | ast.Attribute) -> tuple[tuple[Rule, str], ...]:
        """(rule, matched name) for a reference; a bare name's are looked up once per file (most names of a
        file are bare, and the same few recur)."""
        if isinstance(node, ast.Name):
            found = self.bare_name_hits.get(node.id)
            if found is None:
                found = self.bare_name_hits[node.id] = self._rules_naming(self.tree.names.of(node))
            return found
        return self._rules_naming(self.tree.names.of(node))

    def _capability_decisions(self, rule: Rule, node: ast.AST, hit: str) -> None:
        """A capability is reported where it decides (auditor/match/engines/python/capability.py), not where it is read;
        a decision that only picks a message is none."""
        if self.capability_sites is None:
            self.capability_sites = CapabilitySites(self.tree, self.guards.persona)
        def is_read(read: ast.AST) -> bool:
            return bool(pattern_matches(rule.python.names, self.tree.names.of(read)))

        for decision in self.capability_sites.decisions(node, is_read):
            if self._inside_ok(rule, decision.node) and not self._decides_only_a_message(decision.node):
                self.raw.append((rule, decision.node, hit, "decision", None))

    def _decides_only_a_message(self, node: ast.AST) -> bool:
        """Tested by an `if` whose branches only print, log or warn, or assigned to a name only such tests read
        (`newer = any(p.major >= 8 ...)` then `if not newer: print(...)`)."""
        if self._only_messages_follow(node):
            return True
        reads = self._reads_of_assigned(node)
        return bool(reads) and all(self._only_messages_follow(r) for r in reads)

    def _rules_naming(self, names: frozenset[str]) -> tuple[tuple[Rule, str], ...]:
        if not names:
            return ()
        return tuple((rule, hit) for rule in self.name_rules if (hit := pattern_matches(rule.python.names, names)))

    def _context_ok(self, rule: Rule, node: ast.AST) -> bool:
        contexts = rule.python.contexts
        return not contexts or self._context(node) in contexts

    def _inside_ok(self, rule: Rule, node: ast.AST) -> bool:
        wanted = rule.python.in_calls
        return not wanted or self._enclosing_call_matches(node, wanted)

    def _enclosing_call_matches(self, node: ast.AST, wanted: Sequence[str]) -> bool:
        child, parent = node, self.tree.parent(node)
        while parent is not None and not isinstance(parent, ast.stmt):
            if isinstance(parent, ast.Call) and child is not parent.func:
                if pattern_matches(wanted, self.tree.names.of(parent.func)):
                    return True
            child, parent = parent, self.tree.parent(parent)
        return False

    # -- strings --------------------------------------------------------------------------------
    def on_string(self, node: ast.Constant | ast.JoinedStr) -> None:
        if not self.string_rules:
            return
        value = string_value(node)
        if not value:
            return
        code = None
        for rule in self.string_rules:
            m = compiled_regex(rule.python.strings).search(value)
            if m and code is None:
                # docstrings, bare string statements and f-string format specs are not code
                code = not isinstance(self.tree.parent(node), (ast.Expr, ast.JoinedStr, ast.FormattedValue))
            if m and code and self._inside_ok(rule, node) and self._string_context_ok(rule, node):
                line = node.lineno + (value.count("\n", 0, m.start()) if isinstance(node, ast.Constant) else 0)
                self.raw.append((rule, node, m.group(0), "string", line))

    def _report_callers(self) -> None:
        """Rules with `callers = true` also report each call, in this file, of a function whose body they
        matched (`def smi(): return "nvidia-smi"` ... `run(smi())`): that call site is where it is used."""
        self.raw.extend(helper_calls(self.tree, self.raw))

    # -- results --------------------------------------------------------------------------------
    def _findings(self) -> list[Finding]:
        seen: set[tuple[str, int, str]] = set()
        out: list[Finding] = []
        for rule, node, subject, kind, line_override in self.raw:
            assert isinstance(node, (ast.stmt, ast.expr))   # what the handlers record: statements and expressions
            start, end = start_of(node), end_of(node)
            line = line_override or start[0]
            # two matches of one rule in the strings of one line (`FLAGS += ["--expt-relaxed-constexpr",
            # "--expt-extended-lambda"]`, or `[smi(), "--query-gpu=name"]` with its helper's call) are one site:
            # they would print as the same row twice
            key = (rule.id, line, "" if kind in ("string", "caller", "decision") else subject)
            if key in seen:
                continue
            seen.add(key)
            guarded = GuardedRegions.inside(self.guards.regions, start, end) or (
                kind == "import" and GuardedRegions.inside(self.guards.import_regions, start, end)
            ) or (kind == "code" and subject in self.guards.fallback_names) or (
                rule.category in TOLERATED and GuardedRegions.inside(self.guards.tolerant_regions, start, end)) \
                or self._read_only_where_guarded(node)
            column = start[1] + 1 if line_override is None else None
            optional = kind == "import" and GuardedRegions.inside(self.guards.optional_regions, start, end)
            out.append(make_finding(
                rule, self.path, Span(line, column, end[0] if line_override is None else line), subject,
                snippet_of(self.lines, line), guarded=guarded, optional=optional,
            ))
        return out


def _on_constant(engine: _Engine, node: ast.Constant) -> None:
    if isinstance(node.value, str):
        if is_cuda_source(node.value) and not isinstance(engine.tree.parent(node), ast.Expr):   # not a docstring
            engine.scan.embedded.append(EmbeddedCuda(node.value, node.lineno))
        engine.on_string(node)


# What finds hits, and what reads the guards that judge them (only for a file with hits).
_MATCHERS: dict[type[ast.AST], Callable[[_Engine, Any], None]] = {
    ast.Import: _Engine.on_import,
    ast.ImportFrom: _Engine.on_import_from,
    ast.AugAssign: _Engine.on_aug_assign,
    ast.Call: _Engine.on_call,
    ast.Name: _Engine.on_reference,
    ast.Attribute: _Engine.on_reference,
    ast.Constant: _on_constant,
    ast.JoinedStr: _Engine.on_string,
}
_GUARD_READERS: dict[type[ast.AST], Callable[[_Engine, Any], None]] = {
    ast.If: _Engine.on_if,
    ast.While: _Engine.on_if,
    ast.IfExp: _Engine.on_ifexp,
    ast.BoolOp: _Engine.on_boolop,
    ast.Try: _Engine.on_try,
    ast.TryStar: _Engine.on_try,
}


def scan_python(
    tree: PythonTree, rulebook: Rulebook | ScanContext, path: str, lines: list[str],
    lowered: str | Haystack | None = None, module: str | None = None,
) -> PythonScan:
    """`lowered` (the file's text in lower case) lets rules whose needles it lacks be skipped. `module`: the
    file's dotted module name in its project, when known: its relative imports are then matched as absolute ones
    (only the project's own modules are imported that way, which only a rule naming them can match)."""
    return _Engine(tree, ScanContext.of(rulebook), path, lines, lowered, module).run()
