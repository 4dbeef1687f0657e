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
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
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
    """A literal's text; an f-string's literal parts with `{}` where its fields are."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(
            part.value if isinstance(part, ast.Constant) and isinstance(part.value, str) else "{}"
            for part in node.values
        )
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
    # what the build reader (auditor/model/rocmpath/pytruth.py) reads besides the names above: a build script's names
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
    nvidia_only_major: int = 99                       # thresholds from this major are NVIDIA-only architectures
    command_line: frozenset[str] = frozenset()        # the build script's arguments (`sys.argv`): no project flag
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
                   names(persona, "properties_calls"), str(persona.get("nvidia_arch_text", "(?!)")),
                   int(persona.get("nvidia_only_from", {}).get("major", 99)), names(persona, "command_line"))
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
                "gpus": [(g.arch, g.major, g.minor) for g in self.gpus], "command_line": sorted(self.command_line)}

    def vendor_neutral(self) -> "PythonPersona":
        """Only what holds for a default install on any vendor's machine (no project flag on the command line): a
        test false here is an opt-in, off for a CUDA user's default install too."""
        return PythonPersona.of({}, {"command_line": sorted(self.command_line)})

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
                # `os.environ.get("CUDA_HOME")`: unset where no CUDA toolkit is installed; with a default, the
                # default is the value (`os.environ.get("CUDA_HOME", "/usr/local/cuda")` is a path)
                default = node.args[1] if len(node.args) > 1 else None
                if default is None or isinstance(default, ast.Constant) and not default.value:
                    return False
                return None
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

    def command_line_test(self, node: ast.Compare, name_of: Callable[[ast.AST], str],
                          argument_names: Collection[str]) -> bool | None:
        """`"--enable-x" in sys.argv`, or `arg == "--enable-x"` with `arg` bound from `sys.argv`: the default install
        runs the build script with the installer's own commands, so a project's own flag is absent."""
        right, op = node.comparators[0], node.ops[0]
        membership = isinstance(op, (ast.In, ast.NotIn))
        flag = string_value(node.left if membership else right)
        if flag is None or not flag.startswith("-"):
            return None
        if membership and name_of(right.value if isinstance(right, ast.Subscript) else right) in self.command_line:
            return isinstance(op, ast.NotIn)
        if isinstance(op, (ast.Eq, ast.NotEq)) and isinstance(node.left, ast.Name) and node.left.id in argument_names:
            return isinstance(op, ast.NotEq)
        return None

    def command_line_names(self, nodes: Iterable[ast.AST], name_of: Callable[[ast.AST], str]) -> frozenset[str]:
        """The names a loop binds from the command line: `for arg in sys.argv`, `for i, arg in
        enumerate(sys.argv[1:])`."""
        names: set[str] = set()
        for node in nodes:
            if isinstance(node, (ast.For, ast.comprehension)):
                source = node.iter
                if isinstance(source, ast.Call) and name_of(source.func) == "enumerate" and source.args:
                    source = source.args[0]
                if isinstance(source, ast.Subscript):
                    source = source.value
                if name_of(source) in self.command_line:
                    names.update(n.id for n in ast.walk(node.target) if isinstance(n, ast.Name))
        return frozenset(names)

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
