"""The ROCm persona for Python: what a test or a value is when a ROCm user installs and runs the code (ROCm
PyTorch, no CUDA toolkit, an AMD GPU), evaluated rather than matched. Three-valued: True, False, None (unknown).

The facts are data (rules/guards.toml's [python] and [persona]): names true or None on ROCm, environment variables
a CUDA install alone sets, calls true on a ROCm machine (`torch.cuda.is_available()`), and the GPUs AMD ships with
the compute capability and architecture name ROCm PyTorch reports for each. A comparison of a capability is
evaluated on every one of those GPUs: always true, always false, or it depends on the GPU. The Python engine's
guards (package code) and the build reader (setup.py, op builders) call the same atoms through `PythonPersona`;
they differ only in the name patterns of their profile (`Profile`), whose difference the data file explains."""
from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from enum import Enum
from functools import cache
from typing import Any

from auditor.truth.switches import shipped_table

MAX_TEST_DEPTH = 50     # `not not … x`, nested and/or: deeper is unknown (and no Python recursion limit is met)
ENVIRON_READS = frozenset({"os.environ.get", "os.getenv"})

PartTruth = Callable[[ast.AST], "bool | None"]


def rocm_truth(node: ast.AST, atom: PartTruth, compare: Callable[[ast.Compare], "bool | None"],
               depth: int = 0) -> bool | None:
    """The one three-valued evaluator of a Python test on ROCm: `not`, `and`/`or` and `x is (not) None` combine the
    truth of their parts; any other single comparison is `compare`'s, anything else `atom`'s. Deeper than
    MAX_TEST_DEPTH levels is unknown."""
    if depth > MAX_TEST_DEPTH:
        return None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        inner = rocm_truth(node.operand, atom, compare, depth + 1)
        return None if inner is None else not inner
    if isinstance(node, ast.BoolOp):
        values = [rocm_truth(v, atom, compare, depth + 1) for v in node.values]
        if isinstance(node.op, ast.And):
            return False if False in values else (True if all(v is True for v in values) else None)
        return True if True in values else (False if all(v is False for v in values) else None)
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        right, op = node.comparators[0], node.ops[0]
        if isinstance(right, ast.Constant) and right.value is None and isinstance(op, (ast.Is, ast.IsNot)):
            value = rocm_truth(node.left, atom, compare, depth + 1)
            return None if value is None else ((not value) if isinstance(op, ast.Is) else value)
        return compare(node)
    return atom(node)


def string_value(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


@dataclass(frozen=True)
class Gpu:
    """One AMD GPU as ROCm PyTorch reports it: `get_device_capability()` and `gcnArchName`."""

    arch: str
    major: int
    minor: int


@dataclass(frozen=True)
class Profile:
    """The name patterns of one reader: a name or call true on ROCm, one false (None) there."""

    rocm_pattern: re.Pattern[str]
    rocm_call: re.Pattern[str]
    cuda_pattern: re.Pattern[str]
    cuda_call: re.Pattern[str]


NEVER = re.compile("(?!)")


@dataclass(frozen=True)
class PythonPersona:
    """guards.toml's [python] and [persona], typed: what a Python test's truth on ROCm is read from."""

    rocm_true_names: frozenset[str] = frozenset()     # qualified names true on ROCm (`torch.version.hip`)
    rocm_true_pattern: str = "(?!)"                   # a called or referenced name true on ROCm
    cuda_only_names: frozenset[str] = frozenset()     # qualified names false (None) on ROCm
    cuda_only_call_pattern: str = "(?!)"              # a called name false on ROCm (`is_cuda`)
    cuda_only_env: frozenset[str] = frozenset()       # environment variables only a CUDA install sets
    # what the build reader (auditor/rocmpath/pytruth.py) reads besides the names above: a build script's names
    # and calls true on ROCm, and its names false on ROCm
    build_rocm_true_pattern: str = "(?!)"
    build_rocm_call_pattern: str = "(?!)"
    build_cuda_only_pattern: str = "(?!)"
    # the build reader's comparisons: a backend value (`BUILD_TARGET == "rocm"`), a word of torch.__version__
    build_rocm_values: frozenset[str] = frozenset()
    build_cuda_values: frozenset[str] = frozenset()
    rocm_version_words: frozenset[str] = frozenset()
    cuda_version_words: frozenset[str] = frozenset()
    # [persona]: calls true on a ROCm machine, the GPUs, what reads a capability, an NVIDIA architecture's text
    true_calls: frozenset[str] = frozenset()
    gpus: tuple[Gpu, ...] = ()
    capability_calls: frozenset[str] = frozenset()
    properties_calls: frozenset[str] = frozenset()
    nvidia_arch_text: str = "(?!)"
    profiles: dict[str, Profile] = field(default_factory=dict, compare=False, hash=False, repr=False)

    @classmethod
    def of(cls, section: Mapping[str, Any], persona: Mapping[str, Any] | None = None) -> "PythonPersona":
        def names(table: Mapping[str, Any], key: str) -> frozenset[str]:
            return frozenset(table.get(key, ()))

        def pattern(key: str) -> str:
            return str(section.get(key, "(?!)"))

        persona = persona or {}
        gpus = tuple(Gpu(str(g["arch"]), int(g["capability"][0]), int(g["capability"][1]))
                     for g in persona.get("gpus", ()))
        made = cls(names(section, "rocm_true_names"), pattern("rocm_true_pattern"),
                   names(section, "cuda_only_names"), pattern("cuda_only_call_pattern"),
                   names(section, "cuda_only_env"), pattern("build_rocm_true_pattern"),
                   pattern("build_rocm_call_pattern"), pattern("build_cuda_only_pattern"),
                   names(section, "build_rocm_values"), names(section, "build_cuda_values"),
                   names(section, "rocm_version_words"), names(section, "cuda_version_words"),
                   names(persona, "true_calls"), gpus, names(persona, "capability_calls"),
                   names(persona, "properties_calls"), str(persona.get("nvidia_arch_text", "(?!)")))
        made.profiles.update({
            "code": Profile(re.compile(made.rocm_true_pattern), NEVER, NEVER, re.compile(made.cuda_only_call_pattern)),
            "build": Profile(re.compile(made.build_rocm_true_pattern), re.compile(made.build_rocm_call_pattern),
                             re.compile(made.build_cuda_only_pattern), re.compile(made.build_cuda_only_pattern))})
        return made

    def as_data(self) -> dict:
        return {"rocm_true_names": sorted(self.rocm_true_names), "rocm_true_pattern": self.rocm_true_pattern,
                "cuda_only_names": sorted(self.cuda_only_names),
                "cuda_only_call_pattern": self.cuda_only_call_pattern, "cuda_only_env": sorted(self.cuda_only_env),
                "true_calls": sorted(self.true_calls), "capability_calls": sorted(self.capability_calls),
                "gpus": [(g.arch, g.major, g.minor) for g in self.gpus]}

    def profile(self, name: str) -> Profile:
        return self.profiles[name]

    # -- atoms ----------------------------------------------------------------------------------
    def atom(self, node: ast.AST, names: Collection[str], profile: Profile, rocm: Collection[str] = (),
             cuda: Collection[str] = ()) -> bool | None:
        """A name's or a call's truth on ROCm. `names`: what the node may be called (its qualified names);
        `rocm`, `cuda`: the reader's own names true or None on ROCm (a build script's derived flags)."""
        named = [n for n in names if n]
        if isinstance(node, ast.Call):
            if ENVIRON_READS.intersection(named) and node.args and string_value(node.args[0]) in self.cuda_only_env:
                return False   # `os.environ.get("CUDA_HOME")`: unset where no CUDA toolkit is installed
            if self.true_calls.intersection(named):
                return True    # `torch.cuda.is_available()`: ROCm PyTorch answers for the AMD GPU
            if any(profile.cuda_call.search(n) for n in named):
                return False
            return True if any(profile.rocm_call.search(n) or profile.rocm_pattern.search(n) for n in named) \
                else None
        if isinstance(node, (ast.Name, ast.Attribute)) and named:
            if any(n in self.cuda_only_names or n in cuda or profile.cuda_pattern.search(n) for n in named):
                return False
            if any(n in self.rocm_true_names or n in rocm or profile.rocm_pattern.search(n) for n in named):
                return True
        return None

    def environ_test(self, node: ast.Compare, names_of: Callable[[ast.AST], Collection[str]]) -> bool | None:
        """`"CUDA_PATH" in os.environ`: false on a ROCm machine."""
        right, op = node.comparators[0], node.ops[0]
        if isinstance(op, (ast.In, ast.NotIn)) and string_value(node.left) in self.cuda_only_env \
                and "os.environ" in names_of(right):
            return isinstance(op, ast.NotIn)
        return None

    def version_test(self, node: ast.Compare, name_of: Callable[[ast.AST], str]) -> bool | None:
        """`'cu' in torch.__version__`: ROCm PyTorch's version carries `+rocm6.2`, never `cu`."""
        right, op = node.comparators[0], node.ops[0]
        if isinstance(op, (ast.In, ast.NotIn)) and string_value(node.left) is not None \
                and name_of(right).endswith("__version__"):
            word = (string_value(node.left) or "").strip().lower()
            inside = True if word in self.rocm_version_words else False if word in self.cuda_version_words else None
            return None if inside is None else inside == isinstance(op, ast.In)
        return None

    def backend_test(self, node: ast.Compare) -> bool | None:
        """`BUILD_TARGET == "rocm"`: the ROCm backend option on; `== "cuda"`: off (a build script's choice)."""
        right, op = node.comparators[0], node.ops[0]
        word = string_value(right)
        if word is None or not isinstance(op, (ast.Eq, ast.NotEq)):
            return None
        word = word.strip().lower()
        if word in self.build_rocm_values:
            return isinstance(op, ast.Eq)
        if word in self.build_cuda_values:
            return not isinstance(op, ast.Eq)
        return None


@cache
def shipped_persona() -> PythonPersona:
    """The shipped guards.toml's persona: what a build reader called without a rulebook reads."""
    table = shipped_table()
    return PythonPersona.of(table.get("python", {}), table.get("persona", {}))


# -- a capability, evaluated on every AMD GPU ---------------------------------------------------------------------
class Outcome(Enum):
    ALWAYS_TRUE = "always true on AMD GPUs"
    ALWAYS_FALSE = "always false on AMD GPUs"
    DEPENDS = "depends on the AMD GPU"
    UNKNOWN = "not known statically"


class Unknown(Exception):
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
        raise Unknown(name)


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
            except (Unknown, TypeError, ValueError, KeyError, IndexError, ZeroDivisionError, AttributeError):
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
        except (Unknown, TypeError, ValueError, KeyError, IndexError, ZeroDivisionError, AttributeError):
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
        if all(isinstance(op, EXCLUDING) for op in ops) and outcome is Outcome.ALWAYS_FALSE \
                or all(isinstance(op, EXCLUDING_NEGATED) for op in ops) and outcome is Outcome.ALWAYS_TRUE:
            return outcome
        return None

    def value(self, node: ast.AST, gpu: Gpu, depth: int) -> Any:
        if depth > MAX_TEST_DEPTH:
            raise Unknown("deep")
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
            raise Unknown(node.attr)
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
        raise Unknown(type(node).__name__)

    def _formatted(self, part: ast.AST, gpu: Gpu, depth: int) -> str:
        if isinstance(part, ast.FormattedValue):
            spec = self.value(part.format_spec, gpu, depth) if part.format_spec is not None else ""
            return format(self.value(part.value, gpu, depth), spec)
        return str(self.value(part, gpu, depth))

    def _name(self, node: ast.Name, gpu: Gpu, depth: int) -> Any:
        bound = self.binding(node)
        if bound is None:
            raise Unknown(node.id)
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
        raise Unknown("call")


def dotted(node: ast.AST) -> str:
    """`a.b.c` of a name, an attribute chain or a call of one; "" for anything else, or for a chain over
    MAX_TEST_DEPTH links. A loop, not recursion: a chain thousands of links long (`a.b.b.b…`) is valid Python."""
    attributes: list[str] = []
    for _ in range(MAX_TEST_DEPTH):
        if isinstance(node, ast.Attribute):
            attributes.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Call):      # `f().x` is `f.x`
            node = node.func
        else:
            break
    else:
        return ""           # longer than any name a build script tests (and not walked again for each link)
    head = node.id if isinstance(node, ast.Name) else ""
    return ".".join(([head] if head else []) + attributes[::-1])
