"""Python engine: imports, qualified-name references and calls, string literals, guards (libcst)."""
from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import PurePosixPath

import libcst as cst

from auditor.engines import make_finding, snippet_of
from auditor.engines.dependency import Declared, import_rule_for
from auditor.parsing.python import PythonTree
from auditor.rulebook import Rulebook
from auditor.types import Finding, Rule, Span

# Calls whose string argument is CUDA source, compiled at run time (scanned with the cuda rules).
EMBEDDED_CUDA_CALLS = {
    "torch.utils.cpp_extension.load_inline": ("cuda_sources",),
    "cupy.RawKernel": ("code", 0),
    "cupy.RawModule": ("code", 0),
    "cupy.ElementwiseKernel": ("operation", 2),
    "cupy.ReductionKernel": ("map_expr", 2),
    "pycuda.compiler.SourceModule": ("source", 0),
    "cuda.nvrtc.nvrtcCreateProgram": ("src", 1),
}
SETUP_KEYWORDS = {"install_requires": False, "setup_requires": False, "extras_require": True}
IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException", "OSError"}


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


def _pattern_matches(patterns: list[str], names: set[str]) -> str | None:
    for name in names:
        for pattern in patterns:
            if pattern.endswith(".*"):
                if name.startswith(pattern[:-1]) or name == pattern[:-2]:
                    return name
            elif "*" in pattern:
                if fnmatch.fnmatchcase(name, pattern):
                    return name
            elif name == pattern:
                return name
    return None


class _Guards:
    """Line ranges of Python code that a ROCm run never executes, from `if torch.version.hip:`-style tests."""

    def __init__(self, tree: PythonTree, guards: dict):
        section = guards.get("python", {})
        self.tree = tree
        self.rocm_names = set(section.get("rocm_true_names", ()))
        self.rocm_pattern = re.compile(section.get("rocm_true_pattern", r"(?!)"))
        self.cuda_names = set(section.get("cuda_only_names", ()))
        self.cuda_call = re.compile(section.get("cuda_only_call_pattern", r"(?!)"))
        self.ranges: list[tuple[int, int]] = []
        self.import_ranges: list[tuple[int, int]] = []

    def dotted(self, node: cst.BaseExpression) -> str | None:
        if isinstance(node, cst.Name):
            return node.value
        if isinstance(node, cst.Attribute):
            inner = self.dotted(node.value)
            return f"{inner}.{node.attr.value}" if inner else None
        return None

    def truth(self, node: cst.BaseExpression) -> bool | None:
        """Truth of an expression on a ROCm build, or None when unknown."""
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not):
            inner = self.truth(node.expression)
            return None if inner is None else not inner
        if isinstance(node, cst.BooleanOperation):
            left, right = self.truth(node.left), self.truth(node.right)
            if isinstance(node.operator, cst.And):
                if left is False or right is False:
                    return False
                return True if left and right else None
            if left is True or right is True:
                return True
            return False if left is False and right is False else None
        if isinstance(node, cst.Comparison) and len(node.comparisons) == 1:
            target = node.comparisons[0]
            if isinstance(target.comparator, cst.Name) and target.comparator.value == "None":
                value = self.truth(node.left)
                if value is None:
                    return None
                is_none = not value
                return is_none if isinstance(target.operator, cst.Is) else not is_none
            return None
        if isinstance(node, cst.Call):
            names = self.tree.qualified_names(node.func) | {self.dotted(node.func) or ""}
            if any(self.cuda_call.search(n) for n in names if n):
                return False
            return True if any(self.rocm_pattern.search(n) for n in names if n) else None
        if isinstance(node, (cst.Name, cst.Attribute)):
            names = self.tree.qualified_names(node) | {self.dotted(node) or ""}
            if names & self.cuda_names:
                return False
            if names & self.rocm_names or any(self.rocm_pattern.search(n) for n in names if n):
                return True
        return None

    def add_branch(self, test: cst.BaseExpression, body: cst.CSTNode, orelse: cst.CSTNode | None) -> None:
        value = self.truth(test)
        if value is False:
            self.ranges.append(self._lines(body))
        elif value is True and orelse is not None:
            self.ranges.append(self._lines(orelse))

    def add_try(self, node: cst.Try) -> None:
        for handler in node.handlers:
            caught = handler.type
            names: set[str] = set()
            if caught is None:
                names.add("BaseException")
            elif isinstance(caught, cst.Tuple):
                names.update(self.dotted(e.value) or "" for e in caught.elements)
            else:
                names.add(self.dotted(caught) or "")
            if names & IMPORT_ERRORS:
                self.import_ranges.append(self._lines(node.body))
                return

    def _lines(self, node: cst.CSTNode) -> tuple[int, int]:
        start, _, end = self.tree.line(node)
        return start, end

    @staticmethod
    def covers(ranges: list[tuple[int, int]], line: int) -> bool:
        return any(a <= line <= b for a, b in ranges)


class _Visitor(cst.CSTVisitor):
    def __init__(self, tree: PythonTree, rulebook: Rulebook, path: str, lines: list[str]):
        self.tree = tree
        self.path = path
        self.lines = lines
        self.is_setup = PurePosixPath(path).name == "setup.py"
        self.dependency_rules = [r for r in rulebook.family("dependency") if "imports" in r.match]
        self.python_rules = [r for r in rulebook.family("python") if self._applies(r)]
        self.call_rules = [r for r in self.python_rules if "calls" in r.match]
        self.name_rules = [r for r in self.python_rules if "names" in r.match]
        self.string_rules = [r for r in self.python_rules if "strings" in r.match]
        self.guards = _Guards(tree, rulebook.guards)
        self.raw: list[tuple[Rule, int, int, int, str, str]] = []  # rule, line, col, end, subject, kind
        self.call_stack: list[set[str]] = []
        self.module_strings: dict[str, cst.BaseExpression] = {}
        self.scan = PythonScan()

    def _applies(self, rule: Rule) -> bool:
        files = rule.match.get("files")
        return not files or any(fnmatch.fnmatch(PurePosixPath(self.path).name, f) for f in files)

    def _hit(self, rule: Rule, node: cst.CSTNode, subject: str, kind: str = "code") -> None:
        line, col, end = self.tree.line(node)
        self.raw.append((rule, line, col, end, subject, kind))

    # -- guards ---------------------------------------------------------------------------------
    def visit_If(self, node: cst.If) -> None:
        self.guards.add_branch(node.test, node.body, node.orelse)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self.guards.add_branch(node.test, node.body, node.orelse)

    def visit_Try(self, node: cst.Try) -> None:
        self.guards.add_try(node)

    # -- imports --------------------------------------------------------------------------------
    def _import(self, node: cst.CSTNode, module: str) -> None:
        best: tuple[Rule, str] | None = None
        for rule, wanted in import_rule_for(self.dependency_rules, module):
            if best is None or len(wanted) > len(best[1]):
                best = (rule, wanted)
        if best:
            self._hit(best[0], node, best[1], "import")

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            self._import(node, _dotted_name(alias.name))

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.relative or node.module is None:
            return
        module = _dotted_name(node.module)
        if module == "torch.utils.cpp_extension" or module.startswith("torch.utils.cpp_extension"):
            self.scan.uses_cpp_extension = True
        submodules = []
        if not isinstance(node.names, cst.ImportStar):
            submodules = [f"{module}.{_dotted_name(a.name)}" for a in node.names]
        for candidate in submodules + [module]:
            before = len(self.raw)
            self._import(node, candidate)
            if len(self.raw) > before:
                break

    # -- module-level string constants (for embedded CUDA passed by name) -----------------------
    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            self.module_strings[node.targets[0].target.value] = node.value

    # -- calls ----------------------------------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        names = self.tree.qualified_names(node.func)
        self.call_stack.append(names)
        for rule in self.call_rules:
            hit = _pattern_matches(rule.match["calls"], names)
            if hit and self._keywords_ok(rule, node):
                self._hit(rule, node, hit)
        if "importlib.import_module" in names and node.args:
            value = _string_value(node.args[0].value)
            if value:
                self._import(node, value)
        if names & {"torch.utils.cpp_extension.CUDAExtension", "torch.utils.cpp_extension.load",
                    "torch.utils.cpp_extension.load_inline"}:
            self.scan.uses_cpp_extension = True
        for name in names & set(EMBEDDED_CUDA_CALLS):
            self._embedded(node, EMBEDDED_CUDA_CALLS[name])
        if self.is_setup:
            self._setup_requirements(node)

    def leave_Call(self, original_node: cst.Call) -> None:
        self.call_stack.pop()

    @staticmethod
    def _keywords_ok(rule: Rule, node: cst.Call) -> bool:
        wanted = rule.match.get("keywords")
        if not wanted:
            return True
        return any(arg.keyword is not None and arg.keyword.value in wanted for arg in node.args)

    def _embedded(self, node: cst.Call, where: tuple) -> None:
        keyword, position = where[0], (where[1] if len(where) > 1 else None)
        value: cst.BaseExpression | None = None
        positional = [a for a in node.args if a.keyword is None]
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value == keyword:
                value = arg.value
        if value is None and position is not None and len(positional) > position:
            value = positional[position].value
        if isinstance(value, cst.Name) and value.value in self.module_strings:
            value = self.module_strings[value.value]
        items = value.elements if isinstance(value, (cst.List, cst.Tuple)) else [value] if value else []
        for item in items:
            expr = item.value if isinstance(item, cst.Element) else item
            if isinstance(expr, cst.Name) and expr.value in self.module_strings:
                expr = self.module_strings[expr.value]
            code = _string_value(expr)
            if code and isinstance(expr, (cst.SimpleString, cst.ConcatenatedString)):
                self.scan.embedded.append(EmbeddedCuda(code, self.tree.line(expr)[0]))

    def _setup_requirements(self, node: cst.Call) -> None:
        for arg in node.args:
            if arg.keyword is None or arg.keyword.value not in SETUP_KEYWORDS:
                continue
            value = arg.value
            if isinstance(value, cst.Name) and value.value in self.module_strings:
                value = self.module_strings[value.value]
            optional = SETUP_KEYWORDS[arg.keyword.value]
            if isinstance(value, cst.Dict):
                for element in value.elements:
                    if isinstance(element, cst.DictElement):
                        extra = _string_value(element.key) or "?"
                        self._declare_list(element.value, True, f"extra '{extra}'")
            else:
                where = "" if arg.keyword.value == "install_requires" else arg.keyword.value
                self._declare_list(value, optional, where)

    def _declare_list(self, value: cst.BaseExpression, optional: bool, where: str) -> None:
        if isinstance(value, cst.Name) and value.value in self.module_strings:
            value = self.module_strings[value.value]
        if not isinstance(value, (cst.List, cst.Tuple)):
            return
        for element in value.elements:
            text = _string_value(element.value)
            if text:
                self.scan.declared.append(Declared(text, self.tree.line(element.value)[0], optional, where))

    # -- names ----------------------------------------------------------------------------------
    def _reference(self, node: cst.Name | cst.Attribute) -> None:
        if not self.name_rules:
            return
        names = self.tree.qualified_names(node)
        if not names:
            return
        for rule in self.name_rules:
            hit = _pattern_matches(rule.match["names"], names)
            if hit and self._context_ok(rule, node):
                self._hit(rule, node, hit)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._reference(node)

    def visit_Name(self, node: cst.Name) -> None:
        parent = self.tree.parent(node)
        if isinstance(parent, cst.Attribute) and parent.attr is node:
            return
        self._reference(node)

    def _context_ok(self, rule: Rule, node: cst.CSTNode) -> bool:
        contexts = rule.match.get("contexts")
        return not contexts or self._context(node) in contexts

    def _context(self, node: cst.CSTNode) -> str:
        parent = self.tree.parent(node)
        if isinstance(parent, cst.Call) and parent.func is node:
            return "call"
        if isinstance(parent, cst.Attribute) and parent.value is node:
            return "attribute"
        if isinstance(parent, cst.ComparisonTarget):
            parent = self.tree.parent(parent)
        if isinstance(parent, cst.Comparison):
            is_none = all(
                isinstance(t.operator, (cst.Is, cst.IsNot))
                and isinstance(t.comparator, cst.Name) and t.comparator.value == "None"
                for t in parent.comparisons
            )
            return "test" if is_none else "compare"
        if isinstance(parent, cst.Arg):
            return "argument"
        if isinstance(parent, (cst.If, cst.While, cst.IfExp, cst.BooleanOperation, cst.Assert)) or (
            isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Not)
        ):
            return "test"
        return "other"

    # -- strings --------------------------------------------------------------------------------
    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        self._string(node)

    def visit_ConcatenatedString(self, node: cst.ConcatenatedString) -> bool:
        self._string(node)
        return False

    def _string(self, node: cst.BaseExpression) -> None:
        if not self.string_rules:
            return
        value = _string_value(node)
        if not value:
            return
        for rule in self.string_rules:
            wanted = rule.match.get("in_calls")
            if wanted and not any(_pattern_matches(wanted, names) for names in self.call_stack):
                continue
            m = re.search(rule.match["strings"], value)
            if m:
                line = self.tree.line(node)[0] + value.count("\n", 0, m.start())
                self.raw.append((rule, line, None, line, m.group(0), "string"))

    # -- results --------------------------------------------------------------------------------
    def findings(self) -> list[Finding]:
        seen: set[tuple[str, int, str]] = set()
        out: list[Finding] = []
        for rule, line, col, end, subject, kind in self.raw:
            key = (rule.id, line, subject)
            if key in seen:
                continue
            seen.add(key)
            guarded = _Guards.covers(self.guards.ranges, line) or (
                kind == "import" and _Guards.covers(self.guards.import_ranges, line)
            )
            out.append(make_finding(
                rule, self.path, Span(line, col, end), subject, snippet_of(self.lines, line), guarded=guarded
            ))
        return out

    def guarded_line(self, line: int) -> bool:
        return _Guards.covers(self.guards.ranges, line)


def _dotted_name(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return f"{_dotted_name(node.value)}.{node.attr.value}"
    return ""


def _string_value(node: cst.BaseExpression | None) -> str | None:
    try:
        if isinstance(node, cst.SimpleString):
            value = node.evaluated_value
        elif isinstance(node, cst.ConcatenatedString):
            value = node.evaluated_value
        else:
            return None
    except Exception:  # libcst raises on some exotic literals; they carry nothing we match
        return None
    return value if isinstance(value, str) else None


def scan_python(tree: PythonTree, rulebook: Rulebook, path: str, lines: list[str]) -> tuple[PythonScan, _Visitor]:
    visitor = _Visitor(tree, rulebook, path, lines)
    tree.module.visit(visitor)
    visitor.scan.findings.extend(visitor.findings())
    return visitor.scan, visitor
