"""A module's syntax tree as the tests that read auditor/'s code (module state, switches, rule ids) walk it: parsed
once per test process, whichever of them asks first. The trees are only read."""
from __future__ import annotations

import ast
from functools import cache


@cache
def syntax_tree(source: str) -> ast.Module:
    return ast.parse(source)
