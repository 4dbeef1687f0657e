"""What the names a Python build script tests mean on ROCm (ROCm PyTorch installed, no CUDA toolkit): the flags
it derives from a configuration test, what it imports from torch.utils.cpp_extension, the flags it leaves at
a falsy default on ROCm, and the names bound to an extension class."""
from __future__ import annotations

import ast
import re
from collections.abc import Callable, Sequence

from auditor.model.rocmpath.pytruth import TORCH_EXTENSION_MODULE, Truth
from auditor.truth.python import dotted
from auditor.truth.python import shipped_persona
from auditor.truth.python import PythonPersona


def torch_extension_names(qualified: frozenset[str]) -> frozenset[str]:
    """The names `from torch.utils.cpp_extension import …` binds among these qualified names."""
    prefix = TORCH_EXTENSION_MODULE + "."
    return frozenset(name[len(prefix):] for name in qualified if name.startswith(prefix))


def derived_truth(nodes: list[ast.AST], unset: frozenset[str], switches: PythonPersona | None = None,
                  defaults_true: frozenset[str] = frozenset()) -> Truth:
    """`unset`, `defaults_true`: names a ROCm build leaves at a falsy, a truthy default. Names assigned a ROCm test
    (`IS_ROCM = torch.version.hip is not None`) are ROCm atoms; names every assignment of which is false on ROCm
    (`use_cuda = torch.version.cuda and CUDA_HOME is not None`) are CUDA atoms; and what the module imports from
    torch.utils.cpp_extension keeps its meaning under its local name. Twice, for names derived from derived names
    (`build_cuda = use_cuda and not IS_WINDOWS`)."""
    rocm: set[str] = set()
    cuda: set[str] = set()
    switches = switches if switches is not None else shipped_persona()
    torch_cuda, torch_rocm = torch_extension_names(switches.cuda_only_names), torch_extension_names(
        switches.rocm_true_names)
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.module == TORCH_EXTENSION_MODULE:
            for alias in node.names:
                if alias.name in torch_cuda:
                    cuda.add(alias.asname or alias.name)
                elif alias.name in torch_rocm:
                    rocm.add(alias.asname or alias.name)
    guarded = _self_guarded(nodes)
    assigned = [(node.targets[0].id, node.value) for node in nodes if isinstance(node, ast.Assign)
                and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and id(node) not in guarded]
    rebound = {name for name, _ in assigned}
    cuda -= rebound        # a project's own `CUDA_HOME = os.environ.get(…, "/usr/local/cuda")` is no None
    rocm -= rebound
    cuda |= unset
    loops = frozenset(n.id for node in nodes if isinstance(node, (ast.For, ast.comprehension))
                      for n in ast.walk(node.target) if isinstance(n, ast.Name))
    arguments = switches.command_line_names(nodes, dotted)
    truth = Truth(set(rocm) | defaults_true, frozenset(cuda), switches, loops, arguments)
    for _ in range(2):
        values: dict[str, list[bool | None]] = {}
        for name, value in assigned:
            values.setdefault(name, []).append(truth.of(value))
        truth = Truth(rocm | defaults_true | {n for n, v in values.items() if True in v},
                      frozenset(cuda | {n for n, v in values.items() if all(x is False for x in v) and n not in unset}),
                      switches, loops, arguments)
    return truth


def _self_guarded(nodes: list[ast.AST]) -> set[int]:
    """Assignments that run only when the name they rebind is already truthy (`if CUDA_VERSION: CUDA_VERSION =
    "".join(CUDA_VERSION.split("."))[:3]`, AutoAWQ_kernels): they cannot make a name false on ROCm true."""
    kept: set[int] = set()
    for node in nodes:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name):
            kept.update(id(stmt) for stmt in node.body if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                        and isinstance(stmt.targets[0], ast.Name) and stmt.targets[0].id == node.test.id)
    return kept


def extension_classes(nodes: list[ast.AST], classes: re.Pattern[str]) -> set[str]:
    """Names bound to an extension class, not an instance: `extension = CUDAExtension if use_gpu else
    CppExtension` (torchao), then called as `extension("pkg._C", sources)`."""
    names: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and isinstance(node.value, (ast.IfExp, ast.Name, ast.Attribute)):
            arms = [node.value.body, node.value.orelse] if isinstance(node.value, ast.IfExp) else [node.value]
            if any(isinstance(arm, (ast.Name, ast.Attribute)) and classes.search(dotted(arm)) for arm in arms):
                names.add(node.targets[0].id)
    return names


def defaults_on_rocm(nodes: list[ast.AST], config_at: Callable[[int], str],
                     truth: Truth) -> tuple[set[str], set[str]]:
    """Names a ROCm build leaves at their constant default, because every other assignment is in a branch it does
    not take: falsy (`use_cutlass = False`, set True only under `if use_cuda:`) and truthy (`DISABLE_EXT = True`,
    set False only under an opt-in flag's test). Needs the branches classified first."""
    stores: dict[str, int] = {}
    for node in nodes:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            stores[node.id] = stores.get(node.id, 0) + 1
    skipped: dict[str, bool] = {}          # every assignment is a constant or in a CUDA branch
    defaults: dict[str, set[bool]] = {}    # the truth of the constants assigned outside CUDA branches
    others: dict[str, set[bool | None]] = {}   # ... and of what the CUDA branches assign (None: not a constant)
    assigned: dict[str, int] = {}
    for node in nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            in_cuda = config_at(node.lineno) == "cuda"
            constant = isinstance(node.value, ast.Constant)
            assigned[name] = assigned.get(name, 0) + 1
            skipped[name] = skipped.get(name, True) and (constant or in_cuda)
            value = bool(node.value.value) if isinstance(node.value, ast.Constant) else None
            (others if in_cuda else defaults).setdefault(name, set()).add(value)   # type: ignore[arg-type]
    # one default, a different value the build skips, and no other binding (loop target, argument, `+=`)
    chosen = {name: defaults[name] for name, ok in skipped.items()
              if ok and len(defaults.get(name, ())) == 1 and others.get(name, defaults[name]) != defaults[name]
              and assigned[name] == stores.get(name) and name not in truth.rocm_names}
    return ({name for name, value in chosen.items() if value == {False}},
            {name for name, value in chosen.items() if value == {True}})


def set_only_by_opt_in(nodes: list[ast.AST], config_at: Callable[[int], str], opt_in: Sequence[tuple[int, int]],
                       names: set[str]) -> set[str]:
    """Those of the names at their default whose other assignments all sit in branches only an opt-in takes (the
    (first, last line) spans in `opt_in`): their default holds for every vendor's default install."""
    lines = {line for first, last in opt_in for line in range(first, last + 1)}
    moved: dict[str, bool] = {}
    for node in nodes:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and node.targets[0].id in names and config_at(node.lineno) == "cuda":
            moved[node.targets[0].id] = moved.get(node.targets[0].id, True) and node.lineno in lines
    return {name for name, only in moved.items() if only}
