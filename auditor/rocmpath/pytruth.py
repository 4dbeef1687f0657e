"""Whether a Python test is true when a ROCm user builds: ROCm PyTorch installed (`torch.version.hip` truthy,
`torch.version.cuda` None), environment variables at their defaults. Three-valued: True, False, None (unknown)."""
from __future__ import annotations

import ast
import re

from auditor.engines.python.guards import MAX_TEST_DEPTH, rocm_truth
from auditor.rulebook import shipped_switches
from auditor.rulebook.context import PythonGuards

# what `from torch.utils.cpp_extension import …` binds is read from guards.toml's names under this module
TORCH_EXTENSION_MODULE = "torch.utils.cpp_extension"


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


class Truth:
    """The truth of a Python test in the ROCm configuration: True, False, or None (unknown)."""

    def __init__(self, rocm_names: set[str], cuda_names: frozenset[str] = frozenset(),
                 switches: PythonGuards | None = None, loop_names: frozenset[str] = frozenset()):
        """`switches`: guards.toml's [python] names, the ones the Python engine reads (the shipped file's when
        None); `loop_names`: names a `for` binds, which vary per iteration rather than per platform."""
        self.rocm_names = rocm_names
        self.loop_names = loop_names
        self.cuda_names = cuda_names      # false (None) on ROCm: `use_cuda = torch.version.cuda and …`, CUDA_HOME
        self.switches = switches if switches is not None else shipped_switches()
        self.rocm_atom = re.compile(self.switches.build_rocm_true_pattern)
        self.rocm_call = re.compile(self.switches.build_rocm_call_pattern)
        self.cuda_atom = re.compile(self.switches.build_cuda_only_pattern)

    def atom(self, node: ast.AST) -> bool | None:
        name = dotted(node)
        if isinstance(node, ast.Call):
            if self.rocm_call.search(name) or self.rocm_atom.search(name):
                return True
            return False if self.cuda_atom.search(name) else None
        if not name:
            return None
        if self.cuda_atom.search(name) or name in self.cuda_names or name in self.switches.cuda_only_names:
            return False
        if name in self.rocm_names or name in self.switches.rocm_true_names or self.rocm_atom.search(name):
            return True
        return None

    def of(self, node: ast.AST) -> bool | None:
        """Truth on ROCm, or None (also for a test nested over MAX_TEST_DEPTH levels): the engine's evaluator
        (engines/python/guards.rocm_truth) with the build reader's atoms and comparisons."""
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or) and node.values:
            # `os.getenv("CUDA_VERSION", None) or torch.version.cuda` (AutoAWQ_kernels): a variable left unset, the
            # default this evaluator assumes, falls through to the CUDA-only value
            values = [None if _unset_env_read(v) else rocm_truth(v, self.atom, self.compare) for v in node.values]
            if False in values and all(v is False or _unset_env_read(t) for v, t in zip(values, node.values)):
                return False
        return rocm_truth(node, self.atom, self.compare)

    def compare(self, node: ast.Compare) -> bool | None:
        right, op = node.comparators[0], node.ops[0]
        if isinstance(op, (ast.In, ast.NotIn)) and isinstance(node.left, ast.Constant) \
                and isinstance(node.left.value, str) and dotted(right).endswith("__version__"):
            # `'cu' in torch.__version__`: ROCm PyTorch's version carries `+rocm6.2`, never `cu`
            word = node.left.value.strip().lower()
            inside = True if word in self.switches.rocm_version_words \
                else False if word in self.switches.cuda_version_words else None
            return None if inside is None else inside == isinstance(op, ast.In)
        if isinstance(node.left, ast.Name) and node.left.id in self.loop_names:
            return None   # `for main, suffix in product(files, ["cpu", "cuda"])`: `suffix == "cuda"` is one variant
        if isinstance(right, ast.Constant) and isinstance(right.value, str) and isinstance(op, (ast.Eq, ast.NotEq)):
            # BUILD_TARGET == "rocm": the ROCm backend option on; == "cuda": off
            word = right.value.strip().lower()
            if word in self.switches.build_rocm_values:
                return isinstance(op, ast.Eq)
            if word in self.switches.build_cuda_values:
                return not isinstance(op, ast.Eq)
        return None

    def implies_rocm(self, node: ast.AST) -> bool:
        """A ROCm atom, possibly and-ed with unknowns, or an `or` one of whose terms is one (`(is_available() and
        gpu_home_available) or force_cuda`, with `gpu_home_available = CUDA_HOME is not None or (is_rocm and
        ROCM_HOME is not None)`: pytorch3d's gate, which a ROCm install passes)."""
        if self.of(node) is True:
            return True
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
            values = [self.of(v) for v in node.values]
            return True in values and False not in values
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
            return any(self.implies_rocm(v) for v in node.values)
        return False


def _unset_env_read(node: ast.AST) -> bool:
    """`os.getenv("X")`, `os.environ.get("X", None)`: falsy while the variable is unset."""
    if not (isinstance(node, ast.Call) and dotted(node) in ("os.getenv", "os.environ.get")) or not node.args \
            or len(node.args) > 2 or node.keywords:
        return False
    default = node.args[1] if len(node.args) == 2 else None
    return default is None or isinstance(default, ast.Constant) and not default.value
