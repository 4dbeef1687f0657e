"""Lines of a setup.py behind an environment opt-in that is off by default: `profile = os.environ.get("X_PROFILE",
"0") == "1"` then `if profile: flags.append("-Xptxas=-v")`, or the test itself in the `if`
(`if os.environ.get("X_CUTLASS", "0") == "1": flags += ["-DX_CUTLASS"]`). A default install never runs them, on
CUDA or ROCm, so what they add is an optional feature, like the lines behind a Makefile opt-in (`USE_X ?= 0`),
and a macro they alone define (`-DX_CUTLASS`) is an opt-in macro."""
from __future__ import annotations

import ast
import re

from auditor.rocmpath.pytruth import dotted

ENV_READS = ("os.environ.get", "os.getenv", "environ.get", "getenv")
DEFINE_FLAG = re.compile(r"(?<![\w-])-D([A-Za-z_]\w*)")


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
    """The body lines of each `if NAME:` (or `if NAME and …:`) whose NAME is assigned, once and at module or
    function level, a test of an environment variable that is false at the variable's default."""
    if "environ" not in text and "getenv" not in text:
        return frozenset()
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()
    assigned: dict[str, list[bool]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    assigned.setdefault(target.id, []).append(_off_by_default(node.value))
    switches = {name for name, offs in assigned.items() if len(offs) == 1 and offs[0]}
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _requires(node.test, switches):
            for stmt in node.body:
                lines.update(range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1))
    return frozenset(lines)


def _requires(test: ast.AST, switches: set[str]) -> bool:
    if isinstance(test, ast.Name):
        return test.id in switches
    if isinstance(test, ast.Compare):
        return _off_by_default(test)
    return isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) and any(
        _requires(v, switches) for v in test.values if isinstance(v, (ast.Name, ast.Compare)))


def _off_by_default(value: ast.AST) -> bool:
    """`env("X", "0") == "1"`, `env("X") == "1"`, `env("X", "0") in ("1", "ON")`: false when X is unset."""
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


def _env_read(node: ast.AST) -> bool:
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
            "lower", "upper", "strip"):
        node = node.func.value
    return isinstance(node, ast.Call) and dotted(node.func) in ENV_READS


def _default(node: ast.AST) -> str | None:
    """The value the read gives when the variable is unset (None: not a constant string)."""
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
            "lower", "upper", "strip"):
        node = node.func.value
    assert isinstance(node, ast.Call)
    if len(node.args) < 2:
        return "" if len(node.args) == 1 else None   # unset: None, which no constant string equals
    default = node.args[1]
    return default.value if isinstance(default, ast.Constant) and isinstance(default.value, str) else None
