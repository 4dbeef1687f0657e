"""Where a GPU's compute capability decides something. A `capability = true` rule's read
(`torch.cuda.get_device_capability()`, `props.major`) is followed through the names it is assigned to (a few
hops: `major, minor = …`, `sm = major * 10 + minor`, `cc = f"{major}.{minor}"`) to the comparisons it reaches,
and each comparison is evaluated on every AMD GPU of the ROCm persona (auditor/truth/python.py). The finding is
the comparison, when it depends on the GPU or is an equality or allow-list test no AMD GPU passes; and the text a
capability is formatted into when that text names an NVIDIA architecture (`"sm_%d%d" % cap`). A read that reaches
no comparison (a cache key, a printed label, a stored record) decides nothing and is no finding."""
from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass

from auditor.parse.python import PythonTree
from auditor.truth.capability import CONVERSIONS, STRING_METHODS, CapabilityEvaluator, Outcome
from auditor.truth.python import PythonPersona, string_value

MAX_HOPS = 3        # names a value passes through before the comparison that decides
Scope = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.Module
# nodes a value passes through unchanged in kind on its way to a comparison or an assignment
CARRIERS = (ast.Subscript, ast.Attribute, ast.Tuple, ast.List, ast.FormattedValue, ast.JoinedStr, ast.BinOp,
            ast.UnaryOp, ast.Starred)

CONTAINERS = (ast.Dict, ast.List, ast.Set)
MUTATORS = frozenset({"append", "extend", "add", "insert", "update", "setdefault"})


@dataclass(frozen=True)
class Decision:
    """A place a capability decides, with what it is on AMD GPUs."""

    node: ast.expr
    why: str


class CapabilitySites:
    def __init__(self, tree: PythonTree, persona: PythonPersona):
        self.tree = tree
        self.persona = persona
        self.arch_text = re.compile(persona.nvidia_arch_text)
        self.evaluator = CapabilityEvaluator(persona, tree.names.of, self._binding)
        self._filled_names: frozenset[str] | None = None
        self._assignments: dict[int, dict[str, list[tuple[ast.Assign, tuple[int, ...]]]]] = {}
        self._calls_gpu: bool | None = None

    def truth(self, test: ast.Compare) -> bool | None:
        """A capability test's truth on every AMD GPU (None: it depends, or it reads no capability)."""
        if not self._file_calls_gpu():
            return None   # no test can read a capability: every one it could reach through names is in the file
        return CapabilityEvaluator(self.persona, self.tree.names.of, self._binding).truth(test)

    def _file_calls_gpu(self) -> bool:
        """Whether the file calls a capability or device-properties function anywhere (asked once per file)."""
        if self._calls_gpu is None:
            wanted = self.persona.capability_calls | self.persona.properties_calls
            names_of = self.tree.names.of
            self._calls_gpu = any(isinstance(node, ast.Call) and not wanted.isdisjoint(names_of(node.func))
                                  for node in self.tree.nodes)
        return self._calls_gpu

    def decisions(self, node: ast.AST, is_read: Callable[[ast.AST], bool]) -> list[Decision]:
        """The comparisons (and NVIDIA architecture names) the value read at `node` reaches and that are findings.
        `is_read`: a node the rule reads a capability at (`props.major` of properties passed in)."""
        self.evaluator = CapabilityEvaluator(self.persona, self.tree.names.of, self._binding, is_read)
        parent = self.tree.parent(node)
        value = parent if isinstance(parent, ast.Call) and parent.func is node else node
        found: list[Decision] = []
        self._follow(value, MAX_HOPS, found, set())
        return found

    def _follow(self, value: ast.AST, hops: int, found: list[Decision], seen: set[int]) -> None:
        child, parent = value, self.tree.parent(value)
        while parent is not None:
            if id(parent) in seen:
                return
            if isinstance(parent, ast.Compare):
                seen.add(id(parent))
                outcome = self.evaluator.decides(parent)
                if outcome is Outcome.UNKNOWN and (not self.evaluator.known(child) or any(
                        isinstance(op, (ast.In, ast.NotIn)) for op in parent.ops)):
                    return   # part of a value the persona cannot know (`(name, cap)`), or looked up in a cache
                if outcome is not None:
                    found.append(Decision(parent, outcome.value))
                return
            if isinstance(parent, (ast.JoinedStr, ast.BinOp)) and self._names_nvidia_arch(parent):
                seen.add(id(parent))
                found.append(Decision(parent, "formatted into an NVIDIA architecture name"))
                return
            if isinstance(parent, ast.Assign) and parent.value is child:
                if hops > 0:
                    for read in self._reads_after(parent):
                        self._follow(read, hops - 1, found, seen)
                return
            if isinstance(parent, ast.Subscript) and parent.slice is child:
                return   # a key something is looked up under (a cache): it selects no code path
            if not (isinstance(parent, CARRIERS) or self._converts(parent, child)):
                return
            child, parent = parent, self.tree.parent(parent)

    def _converts(self, parent: ast.AST, child: ast.AST) -> bool:
        """`str(cap)`, `int(...)`, `".".join(...)`, `cc.startswith(...)`: calls the evaluator follows."""
        if isinstance(parent, (ast.GeneratorExp, ast.ListComp, ast.comprehension)):
            return False
        if not isinstance(parent, ast.Call):
            return False
        func = parent.func
        if isinstance(func, ast.Name):
            return func.id in CONVERSIONS
        return isinstance(func, ast.Attribute) and func.attr in STRING_METHODS

    def _names_nvidia_arch(self, node: ast.JoinedStr | ast.BinOp) -> bool:
        if isinstance(node, ast.BinOp):
            left = node.left
            return isinstance(node.op, ast.Mod) and isinstance(left, ast.Constant) and isinstance(left.value, str) \
                and bool(self.arch_text.search(left.value))
        return bool(self.arch_text.search(string_value(node) or ""))

    def _reads_after(self, stmt: ast.Assign) -> list[ast.Name]:
        names = [n.id for target in stmt.targets for n in ast.walk(target) if isinstance(n, ast.Name)]
        scope = self._scope(stmt)
        after = stmt.end_lineno or stmt.lineno
        return [read for name in names for read in self.tree.reads_of(name, scope) if read.lineno > after]

    def _scope(self, node: ast.AST) -> Scope:
        scope = self.tree.parent(node)
        while scope is not None and not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda,
                                                           ast.Module)):
            scope = self.tree.parent(scope)
        return scope if scope is not None else self.tree.module

    def _binding(self, name: ast.Name) -> tuple[ast.AST, tuple[int, ...]] | None:
        """The value last assigned to the name before it is read, in its function and then the module, with the
        indexes that unpack it (`major, minor = cap`: `minor` is element 1)."""
        scope: Scope | None = self._scope(name)
        while scope is not None:
            candidates = [(a, path) for a, path in self._assigned(scope).get(name.id, ())
                          if (a.end_lineno or a.lineno) < name.lineno or isinstance(scope, ast.Module)
                          and not self._inside(name, scope)]
            if candidates:
                assign, path = max(candidates, key=lambda c: c[0].lineno)
                if isinstance(assign.value, CONTAINERS) and (name.id in self._filled() or not (
                        assign.value.keys if isinstance(assign.value, ast.Dict) else assign.value.elts)):
                    return None   # `_CACHE = {}` filled as the program runs: no fixed table
                return assign.value, path
            scope = None if isinstance(scope, ast.Module) else self.tree.module
        return None

    def _filled(self) -> frozenset[str]:
        """Names of containers the file stores into (`d[k] = v`, `d.setdefault(...)`, `s.add(x)`)."""
        if self._filled_names is None:
            filled = set()
            for node in self.tree.nodes:
                if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store) \
                        and isinstance(node.value, ast.Name):
                    filled.add(node.value.id)
                elif isinstance(node, ast.Attribute) and node.attr in MUTATORS and isinstance(node.value, ast.Name):
                    filled.add(node.value.id)
            self._filled_names = frozenset(filled)
        return self._filled_names

    def _inside(self, name: ast.Name, module: ast.Module) -> bool:
        """Read at the module's own level (not inside a function, where any earlier module binding holds)."""
        return self._scope(name) is module

    def _assigned(self, scope: Scope) -> dict[str, list[tuple[ast.Assign, tuple[int, ...]]]]:
        known = self._assignments.get(id(scope))
        if known is not None:
            return known
        table: dict[str, list[tuple[ast.Assign, tuple[int, ...]]]] = {}
        body = scope.body if isinstance(scope.body, list) else [scope.body]
        stack: list[ast.AST] = list(body)
        while stack:
            node = stack.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                continue
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                for target_name, path in _unpacked(node.targets[0], ()):
                    table.setdefault(target_name, []).append((node, path))
            stack.extend(ast.iter_child_nodes(node))
        self._assignments[id(scope)] = table
        return table


def _unpacked(target: ast.AST, path: tuple[int, ...]) -> list[tuple[str, tuple[int, ...]]]:
    if isinstance(target, ast.Name):
        return [(target.id, path)]
    if isinstance(target, (ast.Tuple, ast.List)) and not any(isinstance(e, ast.Starred) for e in target.elts):
        return [pair for i, e in enumerate(target.elts) for pair in _unpacked(e, (*path, i))]
    return []

