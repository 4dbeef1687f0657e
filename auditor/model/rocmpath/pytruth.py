"""Whether a Python test is true when a ROCm user builds: ROCm PyTorch installed (`torch.version.hip` truthy,
`torch.version.cuda` None), environment variables at their defaults. Three-valued: True, False, None (unknown)."""
from __future__ import annotations

import ast

from auditor.truth.python import PythonPersona, dotted, rocm_truth, shipped_persona

# what `from torch.utils.cpp_extension import …` binds is read from guards.toml's names under this module
TORCH_EXTENSION_MODULE = "torch.utils.cpp_extension"


class Truth:
    """The truth of a Python test in the ROCm configuration: True, False, or None (unknown). The persona's atoms
    (auditor/truth/python.py) with the build reader's profile and the names the build script derives."""

    def __init__(self, rocm_names: set[str], cuda_names: frozenset[str] = frozenset(),
                 switches: PythonPersona | None = None, loop_names: frozenset[str] = frozenset(),
                 argument_names: frozenset[str] = frozenset()):
        """`switches`: guards.toml's [python] and [persona], the ones the Python engine reads (the shipped file's
        when None); `loop_names`: names a `for` binds, which vary per iteration rather than per platform;
        `argument_names`: those bound from the command line (`for arg in sys.argv`)."""
        self.rocm_names = rocm_names
        self.loop_names = loop_names
        self.argument_names = argument_names
        self.cuda_names = cuda_names      # false (None) on ROCm: `use_cuda = torch.version.cuda and …`, CUDA_HOME
        self.switches = switches if switches is not None else shipped_persona()
        self.profile = self.switches.profile("build")

    def atom(self, node: ast.AST) -> bool | None:
        name = dotted(node)
        return self.switches.atom(node, (name,), self.profile, self.rocm_names, self.cuda_names)

    def of(self, node: ast.AST) -> bool | None:
        """Truth on ROCm, or None (also for a test nested over MAX_TEST_DEPTH levels)."""
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or) and node.values:
            # `os.getenv("CUDA_VERSION", None) or torch.version.cuda`: a variable left unset, the default this
            # evaluator assumes, falls through to the CUDA-only value
            values = [None if _unset_env_read(v) else rocm_truth(v, self.atom, self.compare) for v in node.values]
            if False in values and all(v is False or _unset_env_read(t) for v, t in zip(values, node.values)):
                return False
        return rocm_truth(node, self.atom, self.compare)

    def compare(self, node: ast.Compare) -> bool | None:
        version = self.switches.version_test(node, dotted)
        if version is not None:
            return version
        environ = self.switches.environ_test(node, lambda n: (dotted(n),))
        if environ is not None:
            return environ     # `"CUDA_HOME" in os.environ`: unset where no CUDA toolkit is installed
        flag = self.switches.command_line_test(node, dotted, self.argument_names)
        if flag is not None:
            return flag   # `arg == "--enable-cuda-ext"` for an argument: absent from the default install
        if isinstance(node.left, ast.Name) and node.left.id in self.loop_names:
            return None   # `for main, suffix in product(files, ["cpu", "cuda"])`: `suffix == "cuda"` is one variant
        return self.switches.backend_test(node)

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
