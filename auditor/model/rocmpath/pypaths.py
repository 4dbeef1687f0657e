"""The strings a build script spells for source paths: constants, `os.path.join("a", "b")`, `Path("a") / "b"`, and
f-strings with `*` for each formatted value."""
from __future__ import annotations

import ast
from collections.abc import Iterable

from auditor.truth.python import dotted


def spelled_strings(nodes: Iterable[ast.AST]) -> list[tuple[int, str]]:
    """String constants among the nodes, with `os.path.join("a", "b")` and `Path("a") / "b"` joined."""
    out: list[tuple[int, str]] = []
    for sub in nodes:
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            out.append((sub.lineno, sub.value))
        elif isinstance(sub, ast.Call) and dotted(sub.func).endswith(("path.join", "osp.join")):
            # an f-string part stands for any name (`f"{name}_cuda.cu"` is `*_cuda.cu`)
            parts = [part for a in sub.args if (part := _path_part(a)) is not None]
            if len(parts) > 1:
                out.append((sub.lineno, "/".join(parts)))
        elif isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.Div):
            parts = [p.value for p in (sub.left, sub.right) if isinstance(p, ast.Constant) and isinstance(p.value, str)]
            if parts:
                out.append((sub.lineno, "/".join(parts)))
    return out


def _path_part(node: ast.AST) -> str | None:
    """A string constant as written, an f-string with `*` for each formatted value; None for anything else."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "*"
                       for v in node.values)
    return None
