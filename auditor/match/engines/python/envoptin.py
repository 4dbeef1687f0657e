"""Lines of Python behind an environment opt-in that is off by default: `profile = os.environ.get("X_PROFILE",
"0") == "1"` then `if profile: flags.append("-Xptxas=-v")` in a setup.py, `if os.environ.get("X_CUDA_ON") == "1":
load(...)` in a package module, and the body of a `for` over a list read from a variable that is empty unless set
(`archs = os.environ.get("GPU_ARCH", "").split()`, also through a helper every call passes it to). A default install
never runs them, on CUDA or ROCm, so what they add is an optional feature, like the lines behind a Makefile opt-in
(`USE_X ?= 0`), and a macro they alone define (`if os.environ.get("X_CUTLASS", "0") == "1": flags +=
["-DX_CUTLASS"]`) is an opt-in macro."""
from __future__ import annotations

import ast
import re

from auditor.match.engines.python.guards import dotted_name
from auditor.parse.python import flatten

ENV_READS = ("os.environ.get", "os.getenv", "environ.get", "getenv")
DEFINE_FLAG = re.compile(r"(?<![\w-])-D([A-Za-z_]\w*)")
ENV_MAPPINGS = ("os.environ", "environ")
CASE_CALLS = ("lower", "upper", "strip")
# an environment read compared or split on the spot: the only files worth parsing (most that name `environ` only
# read a path or a setting)
ENV_TEST = re.compile(r"(?:environ(?:\.get)?|getenv)\s*[(\[][^()\[\]\n]*[)\]]"
                      r"(?:\s*\.\s*(?:lower|upper|strip)\(\))*\s*(?:==|\bin\b|\.split\()")


def opt_in_macros(text: str, lines: frozenset[int] | None = None) -> frozenset[str]:
    """The macros (`-DNAME` flags) a setup.py defines only on lines behind an environment opt-in (`lines`: its
    opt_in_lines, when known): one it also defines elsewhere is on by default."""
    lines = opt_in_lines(text) if lines is None else lines
    if not lines:
        return frozenset()
    on: set[str] = set()
    off: set[str] = set()
    for number, line in enumerate(text.splitlines(), start=1):
        (on if number in lines else off).update(DEFINE_FLAG.findall(line))
    return frozenset(on - off)


def opt_in_lines(text: str) -> frozenset[int]:
    """The body lines of each `if` whose test requires an environment opt-in (a name assigned, once, a test of an
    environment variable that is false at the variable's default, or such a test itself, alone or as a term of
    an `and`), and of each `for` over a list that is empty at the variable's default."""
    if not ENV_TEST.search(text):
        return frozenset()
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()
    return _lines(tree, flatten(tree))


def opt_in_lines_of(text: str, tree: ast.Module, nodes: list[ast.AST]) -> frozenset[int]:
    """opt_in_lines of a module already parsed (`nodes`: its nodes in `ast.walk` order, as parse.python.flatten
    gives them): what the Python engine computes, in the workers, for every module it scans."""
    return _lines(tree, nodes) if ENV_TEST.search(text) else frozenset()


def _lines(tree: ast.Module, nodes: list[ast.AST]) -> frozenset[int]:
    switches, empties = _once(nodes, _off_by_default), _once(nodes, _empty_by_default)
    lines: set[int] = set()
    for node in nodes:
        if isinstance(node, ast.If) and _requires(node.test, switches):
            lines.update(_body_lines(node.body))
        elif isinstance(node, ast.For) and isinstance(node.iter, ast.Name) and node.iter.id in empties:
            lines.update(_body_lines(node.body))
    for function, params in _fed_only_empty_lists(tree, nodes, empties).items():
        for node in ast.walk(function):
            if isinstance(node, ast.For) and isinstance(node.iter, ast.Name) and node.iter.id in params:
                lines.update(_body_lines(node.body))
    return frozenset(lines)


def _body_lines(body: list[ast.stmt]) -> set[int]:
    return {n for stmt in body for n in range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1)}


def _once(nodes: list[ast.AST], test) -> set[str]:
    """Names assigned exactly once in the file, by a value the test accepts."""
    assigned: dict[str, list[bool]] = {}
    for node in nodes:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    assigned.setdefault(target.id, []).append(test(node.value))
    return {name for name, marks in assigned.items() if len(marks) == 1 and marks[0]}


def _requires(test: ast.AST, switches: set[str]) -> bool:
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return any(_requires(v, switches) for v in test.values)
    return (isinstance(test, ast.Name) and test.id in switches) or _off_by_default(test)


def _params(function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    return [a.arg for a in function.args.posonlyargs + function.args.args]


def _fed_only_empty_lists(tree: ast.Module, nodes: list[ast.AST], empties: set[str]) -> dict[ast.AST, set[str]]:
    """Module functions with a parameter that every call in the file passes, positionally, an empty-by-default
    name: `def nvcc_args(archs): for arch in archs: ...` called only as `nvcc_args(gpu_arch)`."""
    if not empties:
        return {}
    functions = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    fed: dict[ast.AST, set[str]] = {}
    calls: dict[str, list[list[str | None]]] = {}   # function -> the positional argument names of each call
    for n in nodes:
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in functions:
            calls.setdefault(n.func.id, []).append([a.id if isinstance(a, ast.Name) else None for a in n.args])
    for name, function in functions.items():
        mine, params = calls.get(name, []), _params(function)
        if not mine or not params:
            continue
        only = {p for i, p in enumerate(params) if all(len(args) > i and args[i] in empties for args in mine)}
        if only:
            fed[function] = only
    return fed


def _off_by_default(value: ast.AST) -> bool:
    """`env("X", "0") == "1"`, `env("X") == "1"`, `os.environ["X"] == "1"`, `env("X", "0") in ("1", "ON")`: false
    when X is unset."""
    if not (isinstance(value, ast.Compare) and len(value.ops) == 1 and _env_read(value.left)):
        return False
    default = _default(value.left)
    if default is None:
        return False
    op, right = value.ops[0], value.comparators[0]
    if isinstance(op, ast.Eq) and isinstance(right, ast.Constant):
        return right.value != default
    if isinstance(op, ast.In) and isinstance(right, (ast.Tuple, ast.List, ast.Set)):
        return all(isinstance(e, ast.Constant) and e.value != default for e in right.elts)
    return False


def _empty_by_default(value: ast.AST) -> bool:
    """`env("X", "").split()` (or `.split(",")`): an empty list when X is unset."""
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "split"):
        return False
    read = _unwrap(value.func.value)
    return isinstance(read, ast.Call) and dotted_name(read.func) in ENV_READS and len(read.args) == 2 \
        and _default(read) == ""


def _unwrap(node: ast.AST) -> ast.AST:
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in CASE_CALLS:
        node = node.func.value
    return node


def _env_read(node: ast.AST) -> bool:
    node = _unwrap(node)
    if isinstance(node, ast.Subscript):
        return dotted_name(node.value) in ENV_MAPPINGS and isinstance(node.slice, ast.Constant)
    return isinstance(node, ast.Call) and dotted_name(node.func) in ENV_READS


def _default(node: ast.AST) -> str | None:
    """The value the read gives when the variable is unset (None: not a constant string). `env("X")` and
    `os.environ["X"]` give "" here: None or a KeyError, which no test of a non-empty constant passes."""
    node = _unwrap(node)
    if isinstance(node, ast.Subscript):
        return ""
    assert isinstance(node, ast.Call)
    if len(node.args) < 2:
        return "" if len(node.args) == 1 else None
    default = node.args[1]
    return default.value if isinstance(default, ast.Constant) and isinstance(default.value, str) else None
