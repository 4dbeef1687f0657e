"""The requirements a setup.py declares: `setup(install_requires=..., extras_require=...)`, and the lists it builds
them in (`install_requires.append("x")`, `reqs += [...]`). A name is read at every module-level assignment of it,
also inside `if`/`else` (`if torch.version.hip: install_requires = [...] else: install_requires = [...]`): the
guards then mark the requirements of the branch a ROCm install skips, and those of the branch it takes decide."""
from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING

from auditor.match.engines.python.guards import string_value
from auditor.parse.declared import Declared

if TYPE_CHECKING:
    from auditor.match.engines.python.engine import PythonScan

SETUP_KEYWORDS = {"install_requires": False, "setup_requires": False, "extras_require": True}
# Names of lists a setup.py builds its requirements in (install_requires.append(...), reqs += [...]).
REQUIREMENT_LIST = re.compile(r"(?i)require|^(?:_?reqs?|deps|dependencies|_?packages_to_install)$")
BLOCKS = (ast.If, ast.Try, ast.With)     # statements whose bodies run at module level


def module_bindings(module: ast.Module) -> dict[str, list[ast.AST]]:
    """name -> every value assigned to it at module level, in the module's own blocks (not in a function)."""
    bindings: dict[str, list[ast.AST]] = {}
    stack: list[ast.stmt] = list(reversed(module.body))
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            bindings.setdefault(stmt.targets[0].id, []).append(stmt.value)
        elif isinstance(stmt, BLOCKS):
            blocks = [stmt.body, getattr(stmt, "orelse", []), getattr(stmt, "finalbody", [])]
            blocks += [handler.body for handler in getattr(stmt, "handlers", [])]
            stack.extend(reversed([s for block in blocks for s in block]))
    return bindings


class SetupRequirements:
    """Mixed into the engine: reads `self.module_strings`, `self.module_bindings`, writes `self.scan.declared`."""

    module_strings: dict[str, ast.AST]
    module_bindings: dict[str, list[ast.AST]]
    scan: PythonScan
    is_setup: bool

    def _resolve(self, node: ast.AST | None) -> ast.AST | None:
        if isinstance(node, ast.Name) and node.id in self.module_strings:
            return self.module_strings[node.id]
        return node

    def _values(self, node: ast.AST) -> list[ast.AST]:
        """Every value a name given to setup() may have: each module-level assignment of it, or itself."""
        if isinstance(node, ast.Name) and self.module_bindings.get(node.id):
            return self.module_bindings[node.id]
        resolved = self._resolve(node)
        return [resolved] if resolved is not None else []

    def _setup_requirements(self, node: ast.Call) -> None:
        for kw in node.keywords:
            if kw.arg not in SETUP_KEYWORDS:
                continue
            for value in self._values(kw.value):
                if isinstance(value, ast.Dict):
                    for key, items in zip(value.keys, value.values):
                        extra = string_value(key) or "?"
                        self._declare_list(items, True, f"extra '{extra}'")
                else:
                    where = "" if kw.arg == "install_requires" else kw.arg
                    self._declare_list(value, SETUP_KEYWORDS[kw.arg], where)

    def _built_requirement_list(self, node: ast.Call) -> None:
        """`install_requires.append("x")` / `.extend([...])` / `.insert(0, "x")` on a requirements list."""
        func = node.func
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                and func.attr in ("append", "extend", "insert") and REQUIREMENT_LIST.search(func.value.id)):
            return
        values = node.args[1:] if func.attr == "insert" else node.args
        for value in values:
            if func.attr == "extend":
                self._declare_list(value, False, "")
            elif (text := string_value(value)):
                self.scan.declared.append(Declared(text, value.lineno, False, ""))

    def on_aug_assign(self, node: ast.AugAssign) -> None:
        """`install_requires += ["x"]` in setup.py."""
        if self.is_setup and isinstance(node.op, ast.Add) and isinstance(node.target, ast.Name) \
                and REQUIREMENT_LIST.search(node.target.id):
            self._declare_list(node.value, False, "")

    def _declare_list(self, given: ast.AST | None, optional: bool, where: str) -> None:
        value = self._resolve(given)
        if isinstance(value, (ast.List, ast.Tuple)):
            for element in value.elts:
                text = string_value(element)
                if text:
                    self.scan.declared.append(Declared(text, element.lineno, optional, where))
