"""What the default install of a Python distribution requires: `[project].dependencies`, setup.py's
`install_requires`, and a top-level `requirements.txt`, as normalized distribution names. An integration with a
package outside this set is optional (the main path decides the verdict)."""
from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable
from functools import lru_cache

from auditor.parse.manifest import ManifestError, pyproject_toml, requirements_txt
from auditor.types import SourceFile
from auditor.util.purepaths import pure

NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
# a setup.py or op builder larger than this is not a real one (vLLM's is 30 KB): parsing megabytes of Python with
# `ast` alone takes seconds
MAX_PYTHON_BUILD_CHARS = 256 * 1024


def normalized(requirement: str) -> str:
    m = NAME.match(requirement)
    return re.sub(r"[-_.]+", "-", m.group(1)).lower() if m else ""


@lru_cache(maxsize=64)
def _install_requires(text: str) -> tuple[str, ...]:
    """Memoised by the text: `history` parses a setup.py once for all the points that hold the same one."""
    if len(text) > MAX_PYTHON_BUILD_CHARS:      # the reader names it as not read
        return ()
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ()
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "install_requires":
            out += [c.value for c in ast.walk(node.value) if isinstance(c, ast.Constant) and isinstance(c.value, str)]
    return tuple(out)


def hard_dependencies(files: Iterable[SourceFile], text_of: Callable[[str], str]) -> frozenset[str]:
    names: set[str] = set()
    for f in files:
        path = pure(f.path)
        try:
            if path.name == "pyproject.toml" and len(path.parts) <= 2:
                names |= {normalized(d.text) for d in pyproject_toml(text_of(f.path)).declared if not d.optional
                          and not d.where}
            elif path.name == "requirements.txt" and len(path.parts) == 1:
                names |= {normalized(d.text) for d in requirements_txt(text_of(f.path)).declared}
            elif path.name == "setup.py" and len(path.parts) <= 2:
                names |= {normalized(r) for r in _install_requires(text_of(f.path))}
        except ManifestError:
            continue
    return frozenset(n for n in names if n)
