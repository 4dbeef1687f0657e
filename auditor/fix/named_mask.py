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
    while define is not None and define.type not in ("preproc_def", "init_declarator"):
        define = define.parent
    if define is not None and define.type == "init_declarator":
        return _local_constant(define, root, finding, context, judge, skip, full_mask)
    name_node = define.child_by_field_name("name") if define is not None else None
    value = define.child_by_field_name("value") if define is not None else None
    if define is None or name_node is None or value is None or not _VALUE.match(value.text or b""):
        raise skip("not a #define of a full 32-bit mask")
    name = name_node.text or b""
    source = root.text or b""
    shared = not finding.path.endswith(_UNIT_SUFFIXES) and not re.search(
        rb"^[ \t]*#[ \t]*undef[ \t]+" + re.escape(name) + rb"\b", source, re.MULTILINE)
    if shared and (elsewhere := context.named_elsewhere.get(name.decode(), "not judged")):
        raise skip(f"{name.decode()} is defined in a header and not #undef'd there, and other files use it: "
                   f"{elsewhere}; report only")
    used = judge_uses(root, name, finding, context, judge, skip, (define.start_byte, define.end_byte))
    if not used and not shared:
        raise skip(f"{name.decode()} is not used in this file")
    found = ALL_ONES.search(value.text or b"")
    assert found is not None   # _VALUE matched
    return [Edit(value.start_byte + found.start(), value.start_byte + found.end(), full_mask.encode(), finding)]


_LOCAL_TYPE = re.compile(rb"^const\s+(?:unsigned(?:\s+int)?|uint32_t|unsigned\s+int)\s+\w+\s*=")


def _local_constant(declarator: Node, root: Node, finding: Finding, context: FixContext, judge: Callable,
                    skip: type[AuditorError], full_mask: str) -> list[Edit]:
    """`const unsigned int FULL_MASK = 0xffffffff;` in a function body becomes `const auto FULL_MASK =
    ROCM_AUDIT_FULL_MASK;`: the same `unsigned int` for CUDA, the 64-bit active mask on AMD. Not `constexpr` (the
    active mask is a run-time value) and not at namespace scope (no device code runs there)."""
    declaration = declarator.parent
    name_node = declarator.child_by_field_name("declarator")
    value = declarator.child_by_field_name("value")
    text = b" ".join((declaration.text or b"").split()) if declaration is not None else b""
    if declaration is None or declaration.type != "declaration" or name_node is None or value is None \
            or name_node.type != "identifier" or len(declaration.children_by_field_name("declarator")) != 1 \
            or not _LOCAL_TYPE.match(text) or not _VALUE.match(value.text or b""):
        raise skip("not a `const unsigned` full mask this fix knows (constexpr or a 64-bit type is for a person)")
    body = declaration.parent
    if body is None or body.type != "compound_statement":
        raise skip("a full-mask constant outside a function body: the active mask is known only in device code")
    name = name_node.text or b""
    uses = [n for n in _identifiers(body, name) if n.start_byte >= declaration.end_byte]
    if not uses:
        raise skip(f"{name.decode()} is not used")
    for use in uses:
        try:
            judge(root, use.start_byte, finding, context)
        except skip as err:
            raise skip(f"its use at line {use.start_point[0] + 1}: {err}") from None
    type_end = name_node.start_byte
    start = declaration.start_byte + len(b"const")
    return [Edit(start, type_end, b" auto ", finding), Edit(value.start_byte, value.end_byte, full_mask.encode())]


def judge_uses(root: Node, name: bytes, finding: Finding, context: FixContext, judge: Callable,
               skip: type[AuditorError], definition: tuple[int, int] = (0, 0)) -> int:
    """How many uses of `name` the file holds (its definition's span aside); raises `skip` at the first that is
    not a full-warp use the literal mask's fix would make."""
    uses = [n for n in _identifiers(root, name) if not (definition[0] <= n.start_byte < definition[1])]
    bodies = [n for n in _macro_bodies(root, name) if not (definition[0] <= n.start_byte < definition[1])]
    for use in uses:
        try:
            judge(root, use.start_byte, finding, context)
        except skip as err:
            raise skip(f"its use at line {use.start_point[0] + 1}: {err}") from None
    for body in bodies:
        _judge_macro_use(body, name, root, context, skip)
    return len(uses) + len(bodies)


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
