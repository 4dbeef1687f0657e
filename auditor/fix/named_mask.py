"""A named full mask (`#define FINAL_MASK 0xffffffff`, as FasterTransformer-derived code writes it) fixed at its
definition: its value becomes ROCM_AUDIT_FULL_MASK when every use is a full-warp use that the literal mask's fix
would make (the same judge: lanes, votes, widths, shims), and no other file can use it (it is defined in a
translation unit, or `#undef`ined in its header)."""
from __future__ import annotations

import re
from collections.abc import Callable

from auditor.fix.edits import Edit, FixContext
from auditor.fix.lanes import lane_limit
from auditor.parse.cuda import Node
from auditor.types import Finding
from auditor.util.errors import AuditorError

ALL_ONES = re.compile(rb"0[xX][fF]{8}[uUlL]*|~\s*0[uU]?|(?:uint32_t|unsigned(?:\s+int)?)\s*\(\s*-\s*1\s*\)|-\s*1")
_VALUE = re.compile(rb"^\s*\(?\s*(?:" + ALL_ONES.pattern + rb")\s*\)?\s*(?://.*|/\*.*\*/)?\s*$", re.DOTALL)
_UNIT_SUFFIXES = (".cu", ".cpp", ".cc", ".cxx", ".c")
_VOTES = {b"__ballot_sync", b"__any_sync", b"__all_sync", b"__match_any_sync", b"__match_all_sync"}


def named_mask(root: Node, offset: int, finding: Finding, context: FixContext, judge: Callable,
               skip: type[AuditorError], full_mask: str) -> list[Edit]:
    """The edit of the definition's value; raises `skip` with the first use that is not a full-warp use."""
    define = root.descendant_for_byte_range(offset, offset)
    while define is not None and define.type != "preproc_def":
        define = define.parent
    name_node = define.child_by_field_name("name") if define is not None else None
    value = define.child_by_field_name("value") if define is not None else None
    if define is None or name_node is None or value is None or not _VALUE.match(value.text or b""):
        raise skip("not a #define of a full 32-bit mask")
    name = name_node.text or b""
    source = root.text or b""
    if not finding.path.endswith(_UNIT_SUFFIXES) and not re.search(
            rb"^[ \t]*#[ \t]*undef[ \t]+" + re.escape(name) + rb"\b", source, re.MULTILINE):
        raise skip(f"{name.decode()} is defined in a header and not #undef'd there: other files may use it, where "
                   "its lanes are not known; report only")
    uses = [n for n in _identifiers(root, name) if not (define.start_byte <= n.start_byte < define.end_byte)]
    bodies = [n for n in _macro_bodies(root, name) if n != value]
    if not uses and not bodies:
        raise skip(f"{name.decode()} is not used in this file")
    for use in uses:
        try:
            judge(root, use.start_byte, finding, context)
        except skip as err:
            raise skip(f"its use at line {use.start_point[0] + 1}: {err}") from None
    for body in bodies:
        _judge_macro_use(body, name, root, context, skip)
    found = ALL_ONES.search(value.text or b"")
    assert found is not None   # _VALUE matched
    return [Edit(value.start_byte + found.start(), value.start_byte + found.end(), full_mask.encode(), finding)]


def _judge_macro_use(body: Node, name: bytes, root: Node, context: FixContext, skip: type[AuditorError]) -> None:
    line = body.start_point[0] + 1
    for call in re.finditer(rb"(\w+)\s*\(\s*" + re.escape(name) + rb"\b(?P<rest>[^;]*)", body.text or b""):
        function = call.group(1)
        if not function.startswith(b"__") or not function.endswith(b"_sync") and function != b"__syncwarp":
            raise skip(f"its use in the macro at line {line} is not the mask of a warp function; report only")
        if function in _VOTES or function.decode() in context.shims:
            raise skip(f"its use in the macro at line {line} is a vote or goes through the project's shim; "
                       "report only")
        if function == b"__shfl_sync" and call.group("rest").count(b",") < 3:
            raise skip(f"its use in the macro at line {line} is a shuffle from a lane without a width; report only")
    if why := lane_limit(body, root):
        raise skip(f"its use in the macro at line {line}: {why}; report only")


def _identifiers(root: Node, name: bytes):
    stack = [root]
    while stack:
        current = stack.pop()
        if current.type == "identifier" and current.text == name:
            yield current
        stack.extend(current.children)


def _macro_bodies(root: Node, name: bytes):
    pattern = re.compile(rb"\b" + re.escape(name) + rb"\b")
    stack = [root]
    while stack:
        current = stack.pop()
        if current.type == "preproc_arg" and pattern.search(current.text or b"") and current.parent is not None \
                and current.parent.type in ("preproc_def", "preproc_function_def"):   # not `#undef NAME`
            yield current
        stack.extend(current.children)
