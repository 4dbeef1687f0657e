"""nvcc-only flags in the flag lists a Python build script hands to torch's extension builders
(`extra_compile_args={"nvcc": [...]}`, `extra_cuda_cflags`): each goes behind `torch.version.hip is None`, in place,
as `*(["--use_fast_math"] if torch.version.hip is None else [])`. The CUDA build gets the same list; a ROCm build
(where hipcc would reject the flag) does not get it. A flag whose value is the next element (`"-gencode",
"arch=compute_80,code=sm_80"`, `"--threads", "4"`) takes its value with it. Only list and tuple elements, in a file
that imports torch, are changed."""
from __future__ import annotations

import re

import libcst as cst
from libcst.metadata import ParentNodeProvider, PositionProvider

from auditor.types import Finding

ROCM_SWITCH = "torch.version.hip is None"
# nvcc options whose value may be the next argument
_TAKES_VALUE = {"-gencode", "--generate-code", "-Xptxas", "--ptxas-options", "-Xcudafe", "-Xnvlink", "-Xfatbin",
                "--threads", "-maxrregcount", "--maxrregcount", "-Xcompiler", "--compiler-options",
                "--default-stream", "--diag-suppress", "--gpu-architecture", "-arch"}


class CudaOnlyFlags(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (PositionProvider, ParentNodeProvider)

    def __init__(self, wanted: dict[int, tuple[Finding, str]]):
        """`wanted`: line -> (its finding, the rule's regex of the strings it reports there)."""
        super().__init__()
        self.wanted = wanted
        self.done: dict[int, Finding] = {}
        self._elements: dict[int, int] = {}     # id(element) -> line

    def visit_SimpleString(self, node: cst.SimpleString) -> bool:
        line = self.get_metadata(PositionProvider, node).start.line
        parent = self.get_metadata(ParentNodeProvider, node, None)
        if line in self.wanted and isinstance(parent, cst.Element) and parent.value is node \
                and re.search(self.wanted[line][1], _text(node)):
            self._elements[id(parent)] = line
        return False

    def leave_List(self, original: cst.List, updated: cst.List) -> cst.BaseExpression:
        return updated.with_changes(elements=self._guarded(original.elements, updated.elements))

    def leave_Tuple(self, original: cst.Tuple, updated: cst.Tuple) -> cst.BaseExpression:
        if not original.lpar:   # `a, b = ...` or a bare tuple: a starred element would change its meaning
            return updated
        return updated.with_changes(elements=self._guarded(original.elements, updated.elements))

    def _guarded(self, original, updated) -> list:
        out = []
        index = 0
        while index < len(updated):
            key = self._elements.get(id(original[index]))
            if key is None:
                out.append(updated[index])
                index += 1
                continue
            group = [updated[index]]
            flag = _text(updated[index].value)
            following = updated[index + 1] if index + 1 < len(updated) else None
            if flag in _TAKES_VALUE:
                # its value is the next element, whatever expression it is (`os.getenv("T") or "4"`); without
                # one in this list the value comes from elsewhere, and dropping the flag alone would leave it
                if following is None or isinstance(following, cst.StarredElement) or _text(following.value
                                                                                         ).startswith("-"):
                    out.append(updated[index])
                    index += 1
                    continue
                group.append(following)
            code = ", ".join(cst.Module([]).code_for_node(e.value) for e in group)
            listed = cst.parse_expression(f"[*([{code}] if {ROCM_SWITCH} else [])]")
            assert isinstance(listed, cst.List)
            starred = listed.elements[0]
            out.append(starred.with_changes(comma=group[-1].comma))
            self.done[key] = self.wanted[key][0]
            index += len(group)
        return out


def _text(node: cst.BaseExpression) -> str:
    value = node.evaluated_value if isinstance(node, cst.SimpleString) else None
    return value if isinstance(value, str) else ""


def imports_torch(module: cst.Module) -> bool:
    """`import torch` at the top level of the file (the name the switch reads)."""
    for statement in module.body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Import) and any(
                        isinstance(a.name, cst.Name) and a.name.value == "torch" and a.asname is None
                        for a in small.names):
                    return True
    return False
