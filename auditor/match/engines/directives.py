"""The preprocessor context of a build-switch test (RA846's `rocm_twin`): whether the ROCm build is already handled
around it, by an enclosing group that tests a ROCm switch or by a neighbouring twin test of the ROCm switch."""
from __future__ import annotations

import re

from auditor.parse import cuda as ts_cuda
from auditor.types import Rule

DIRECTIVES = frozenset({"preproc_if", "preproc_ifdef", "preproc_elif", "preproc_elifdef"})
CUDA_WORD = re.compile(r"(?i)cuda|nccl")
DEFINED_BARE = re.compile(r"defined\s+(\w+)")


def rocm_handled_beside(rule: Rule, node) -> bool:
    """A hit of a rule with `rocm_twin` (a regex naming ROCm switches) in a directive that sits inside a
    conditional group testing a ROCm switch (detectron2: `#if defined(WITH_CUDA)` with a HIP `#else`, nested in
    `#if defined(WITH_CUDA) || defined(WITH_HIP)`), or next to its twin: a directive, before or after it at the
    same level, that tests the same condition with the ROCm switch in place of the CUDA one (`#ifdef WITH_CUDA`
    … `#endif` then `#ifdef WITH_HIP`). A test of both switches beside a CUDA-only one is no twin: the
    CUDA-only one still compiles out on ROCm."""
    pattern = rule.cuda.rocm_twin
    directive = node.parent
    if not pattern or directive is None or directive.type not in DIRECTIVES:
        return False
    rocm = re.compile(pattern)
    ancestor = directive.parent
    while ancestor is not None:
        if ancestor.type in DIRECTIVES and rocm.search(_condition(ancestor)):
            return True
        ancestor = ancestor.parent
    own = _shape(_condition(directive), CUDA_WORD)
    return any(_shape(_condition(twin), rocm) == own for twin in _neighbours(directive) if rocm.search(
        _condition(twin)))


def _condition(directive) -> str:
    """`defined(X)` / `!defined(X)` for #ifdef / #ifndef, the condition's text for #if / #elif."""
    name = directive.child_by_field_name("name")
    if name is not None:
        negated = ts_cuda.text(directive).lstrip("# \t").startswith(("ifndef", "elifndef"))
        return f"{'!' if negated else ''}defined({ts_cuda.text(name)})"
    condition = directive.child_by_field_name("condition")
    return DEFINED_BARE.sub(r"defined(\1)", ts_cuda.text(condition)) if condition is not None else ""


def _shape(condition: str, vendor: re.Pattern) -> str:
    """The condition with its vendor word blanked and spaces removed: `defined(WITH_#)` for both twins."""
    return vendor.sub("#", "".join(condition.split())).upper()


def _neighbours(directive) -> list:
    """The conditional directives just before and just after this one at the same level (comments skipped)."""
    found = []
    for step in ("prev_named_sibling", "next_named_sibling"):
        sibling = getattr(directive, step)
        while sibling is not None and sibling.type == "comment":
            sibling = getattr(sibling, step)
        if sibling is not None and sibling.type in DIRECTIVES:
            found.append(sibling)
    return found
