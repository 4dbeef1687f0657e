"""A GPU's compute capability, evaluated on every AMD GPU of the ROCm persona (guards.toml [persona]): the value
of an expression that reads `torch.cuda.get_device_capability()` or the device properties, once per GPU, and a
comparison's outcome over all of them (always true, always false, or it depends on the GPU)."""
from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Collection
from dataclasses import dataclass
from enum import Enum
from typing import Any

from auditor.truth.python import MAX_TEST_DEPTH, Gpu, PythonPersona


class Outcome(Enum):
    ALWAYS_TRUE = "always true on AMD GPUs"
    ALWAYS_FALSE = "always false on AMD GPUs"
    DEPENDS = "depends on the AMD GPU"
    UNKNOWN = "not known statically"


class _Unknown(Exception):
    """The value cannot be evaluated from the persona (a parameter, an unknown call)."""


@dataclass(frozen=True)
class Properties:
    """What `torch.cuda.get_device_properties(i)` returns on one AMD GPU."""

    gpu: Gpu

    def attribute(self, name: str) -> Any:
        if name in ("major", "minor"):
            return getattr(self.gpu, name)
        if name == "gcnArchName":
            return self.gpu.arch
        raise _Unknown(name)


BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod, ast.Div: operator.truediv}
COMPARE: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
    ast.GtE: operator.ge, ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b}
CONVERSIONS: dict[str, Callable[[Any], Any]] = {"str": str, "int": int, "float": float, "tuple": tuple,
                                                "list": list}
STRING_METHODS = frozenset({"startswith", "endswith", "split", "lower", "upper", "strip", "replace", "join"})
EXCLUDING = (ast.Eq, ast.In)          # true only for the values listed: AMD's are never among NVIDIA's
EXCLUDING_NEGATED = (ast.NotEq, ast.NotIn)
Binding = Callable[[ast.Name], "tuple[ast.AST, tuple[int, ...]] | None"]


@dataclass(frozen=True)
class CapabilityEvaluator:
    """Evaluates an expression once per AMD GPU of the persona. `names_of`: a node's qualified names (the file's
    imports resolved); `binding`: the expression a local name was last assigned, with the indexes that unpack it
    (`major, minor = get_device_capability()`: `major` is element 0)."""

    persona: PythonPersona
    names_of: Callable[[ast.AST], Collection[str]]
    binding: Binding
    is_read: Callable[[ast.AST], bool] = lambda node: False   # a `.major`/`.minor` the rule knows is a GPU's

    def outcome(self, node: ast.AST) -> Outcome:
        values = set()
        for gpu in self.persona.gpus:
            try:
                values.add(bool(self.value(node, gpu, 0)))
            except (_Unknown, TypeError, ValueError, KeyError, IndexError, ZeroDivisionError, AttributeError):
                return Outcome.UNKNOWN
        if values == {True}:
            return Outcome.ALWAYS_TRUE
        return Outcome.ALWAYS_FALSE if values == {False} else Outcome.DEPENDS

    def reads_gpu(self, node: ast.AST, depth: int = 0) -> bool:
        """The expression reads a capability or the device properties, directly or through the names it reads."""
        if depth > 3:
            return False
        for part in ast.walk(node):
            if isinstance(part, ast.Call) and set(self.names_of(part.func)) & (
                    self.persona.capability_calls | self.persona.properties_calls):
                return True
            if isinstance(part, ast.Attribute) and part.attr in ("major", "minor") and self.is_read(part):
                return True
            if isinstance(part, ast.Name) and isinstance(part.ctx, ast.Load):
                bound = self.binding(part)
                if bound is not None and self.reads_gpu(bound[0], depth + 1):
                    return True
        return False

    def truth(self, test: ast.Compare) -> bool | None:
        """A comparison of a capability true (or false) on every AMD GPU; None when it depends or is unknown."""
        if not self.persona.gpus or not self.reads_gpu(test):
            return None
        outcome = self.outcome(test)
        return True if outcome is Outcome.ALWAYS_TRUE else False if outcome is Outcome.ALWAYS_FALSE else None

    def known(self, node: ast.AST) -> bool:
        """The node's value is known on every GPU of the persona."""
        try:
            for gpu in self.persona.gpus:
                self.value(node, gpu, 0)
        except (_Unknown, TypeError, ValueError, KeyError, IndexError, ZeroDivisionError, AttributeError):
            return False
        return True

    def decides(self, compare: ast.Compare) -> Outcome | None:
        """The outcome of a comparison of a capability when it is a finding (None when it is not): it depends on
        the GPU or cannot be known, or it is an equality or allow-list test that no AMD GPU passes (`== 8`,
        `sm in [75, 80, 86]`). An ordering test true or false on every AMD GPU (`major >= 8`, `major < 7`)
        picks the same side for all of them and is no finding."""
        outcome = self.outcome(compare)
        if outcome in (Outcome.DEPENDS, Outcome.UNKNOWN):
            return outcome
        ops = compare.ops
        if outcome is Outcome.ALWAYS_TRUE and self._nvidia_only_threshold(compare):
            return outcome
        if all(isinstance(op, EXCLUDING) for op in ops) and outcome is Outcome.ALWAYS_FALSE \
                or all(isinstance(op, EXCLUDING_NEGATED) for op in ops) and outcome is Outcome.ALWAYS_TRUE:
            return outcome
        return None

    def _nvidia_only_threshold(self, compare: ast.Compare) -> bool:
        """`cap >= (9, 0)` (or `(9, 0) <= cap`, `major > 8`, `sm >= 90`, `major * 100 + minor * 10 >= 900`): a lower
        bound at an architecture AMD has no counterpart for, which every AMD GPU passes (guards.toml [persona]
        nvidia_only_from). Evaluated on the NVIDIA capabilities on either side of that architecture, so the scale
        the code puts the capability on does not matter (`>= 800` on `major * 100 + minor * 10` is Ampere's)."""
        if len(compare.ops) != 1 or not isinstance(compare.ops[0], (ast.Gt, ast.GtE, ast.Lt, ast.LtE)):
            return False
        first = self.persona.nvidia_only_major
        try:
            below = self.value(compare, Gpu("nvidia", first - 1, 9), 0)
            at = self.value(compare, Gpu("nvidia", first, 0), 0)
        except (_Unknown, TypeError, ValueError, KeyError, IndexError, ZeroDivisionError, AttributeError):
            return self._literal_threshold(compare)
        return bool(at) and not below

    def _literal_threshold(self, compare: ast.Compare) -> bool:
        """The bound read from the literal alone, where the expression cannot be evaluated on an NVIDIA GPU."""
        if len(compare.ops) != 1:
            return False
        op = compare.ops[0]
        bound = compare.comparators[0] if isinstance(op, (ast.GtE, ast.Gt)) else \
            compare.left if isinstance(op, (ast.LtE, ast.Lt)) else None
        try:
            value = ast.literal_eval(bound) if bound is not None else None
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return False
        if isinstance(value, tuple) and value and isinstance(value[0], int | float):
            major = float(value[0])
        elif isinstance(value, int | float) and not isinstance(value, bool):
            major = float(value) if value < 20 else float(value) / 10
        else:
            return False
        strict = isinstance(op, (ast.Gt, ast.Lt)) and not isinstance(value, tuple)
        return major + (1 if strict else 0) >= self.persona.nvidia_only_major

    def value(self, node: ast.AST, gpu: Gpu, depth: int) -> Any:
        if depth > MAX_TEST_DEPTH:
            raise _Unknown("deep")
        step = depth + 1
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, (ast.Tuple, ast.List)):
            items = [self.value(e, gpu, step) for e in node.elts]
            return tuple(items) if isinstance(node, ast.Tuple) else items
        if isinstance(node, ast.Set):
            return {self.value(e, gpu, step) for e in node.elts}
        if isinstance(node, ast.Dict):
            return {self.value(k, gpu, step): None for k in node.keys if k is not None}
        if isinstance(node, ast.Name):
            return self._name(node, gpu, step)
        if isinstance(node, ast.Attribute):
            if node.attr in ("major", "minor") and self.is_read(node):
                return getattr(gpu, node.attr)   # `props.major` of properties passed in
            owner = self.value(node.value, gpu, step)
            if isinstance(owner, Properties):
                return owner.attribute(node.attr)
            raise _Unknown(node.attr)
        if isinstance(node, ast.Subscript):
            return self.value(node.value, gpu, step)[self.value(node.slice, gpu, step)]
        if isinstance(node, ast.BinOp) and type(node.op) in BINARY:
            return BINARY[type(node.op)](self.value(node.left, gpu, step), self.value(node.right, gpu, step))
        if isinstance(node, ast.JoinedStr):
            return "".join(self._formatted(part, gpu, step) for part in node.values)
        if isinstance(node, ast.Compare):
            left = self.value(node.left, gpu, step)
            for op, right_node in zip(node.ops, node.comparators):
                right = self.value(right_node, gpu, step)
                if not COMPARE[type(op)](left, right):
                    return False
                left = right
            return True
        if isinstance(node, ast.BoolOp):
            values = [bool(self.value(v, gpu, step)) for v in node.values]
            return all(values) if isinstance(node.op, ast.And) else any(values)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return not self.value(node.operand, gpu, step)
        if isinstance(node, ast.Call):
            return self._call(node, gpu, step)
        raise _Unknown(type(node).__name__)

    def _formatted(self, part: ast.AST, gpu: Gpu, depth: int) -> str:
        if isinstance(part, ast.FormattedValue):
            spec = self.value(part.format_spec, gpu, depth) if part.format_spec is not None else ""
            return format(self.value(part.value, gpu, depth), spec)
        return str(self.value(part, gpu, depth))

    def _name(self, node: ast.Name, gpu: Gpu, depth: int) -> Any:
        bound = self.binding(node)
        if bound is None:
            raise _Unknown(node.id)
        value = self.value(bound[0], gpu, depth)
        for index in bound[1]:
            value = value[index]
        return value

    def _call(self, node: ast.Call, gpu: Gpu, depth: int) -> Any:
        names = set(self.names_of(node.func))
        if names & self.persona.capability_calls:
            return (gpu.major, gpu.minor)
        if names & self.persona.properties_calls:
            return Properties(gpu)
        if isinstance(node.func, ast.Name) and node.func.id in CONVERSIONS and len(node.args) == 1 \
                and not node.keywords:
            return CONVERSIONS[node.func.id](self.value(node.args[0], gpu, depth))
        if isinstance(node.func, ast.Attribute) and node.func.attr in STRING_METHODS and not node.keywords:
            owner = self.value(node.func.value, gpu, depth)
            if isinstance(owner, str):
                args = [self.value(a, gpu, depth) for a in node.args]
                if node.func.attr == "join":
                    args = [[str(x) for x in args[0]]] if len(args) == 1 else args
                return getattr(owner, node.func.attr)(*args)
        raise _Unknown("call")
