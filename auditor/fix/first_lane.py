"""A down-shuffle reduction whose result only the first lane of each 32-lane group reads. With a full mask, the lanes
that run the call on NVIDIA are whole 32-lane warps (a full mask names every lane of the warp: the code is only
right on CUDA when all of them run it), and on AMD each such warp is one half of a wavefront, named by
`__activemask()`. A chain of down-shuffles whose offsets add up to 31 or less (16, 8, 4, 2, 1) brings lane 0 of a
group values from lanes 1-31 of the same group only: lane 0 (and lane 32) gets what lane 0 of the warp gets on
NVIDIA, whatever condition decides which warps run it. The other lanes read beyond their group on AMD and hold
values that differ from NVIDIA's, so the result must be read only at a first lane (`if (lane == 0)`,
`if (threadIdx.x == 0)`, `if (tid % 32 == 0)`), where the function reads it or, for a helper that returns it,
where each of its calls in the translation unit keeps it."""
from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType

from auditor.fix.calls import (argument_count, arity, callee_name, constants, evaluate, fits, function_name,
                               nodes_of as _all)
from auditor.parse.cuda import Node

_SMALL = {1, 2, 4, 8, 16}
_LOOPS = {"for_statement", "while_statement", "do_statement", "for_range_loop"}
_NAME = re.compile(rb"[A-Za-z_]\w*")
_INDEX = re.compile(rb"^\(?\s*threadIdx\.x\s*\)?$")
_MODULO = re.compile(rb"^\(?\s*(.+?)\s*(%|&)\s*(.+?)\s*\)?$")


def first_lane_reduction(mask: Node, own_unit: bool, elsewhere: Mapping[bytes, int] = MappingProxyType({})) -> bool:
    """The mask is that of a `__shfl_down_sync(mask, v, d)` with d <= 16 (a literal, or a loop halving from 16 or
    less) in `v += ...` or `v = op(v, ...)`, and v's reduced value is read only at first lanes (see the module).
    `elsewhere`: integer names the project defines with one value (the file's own definitions come first)."""
    arguments = mask.parent
    call = arguments.parent if arguments is not None else None
    callee = call.child_by_field_name("function") if call is not None else None
    if call is None or callee is None or (callee.text or b"") != b"__shfl_down_sync" or arguments is None \
            or len(arguments.named_children) != 3:
        return False
    value, offset = arguments.named_children[1], arguments.named_children[2]
    root = _root(mask)
    known = {**elsewhere, **constants(root.text or b"")}   # the file's own definitions first
    if not _small_offset(offset, known):
        return False
    target = _reduced(call, value.text or b"")
    function = _enclosing(call, "function_definition")
    if target is None or function is None:
        return False
    if not _one_chain(function, target, known):
        return False
    names = _first_lane_names(function, known)
    reads = _reads(function, target, call)
    if all(_at_first_lane(read, function, names, known) for read in reads if not _returned(read)):
        if not any(_returned(read) for read in reads):
            return bool(reads)
        return own_unit and _callers_keep_it_at_first_lanes(function, root, known)
    return False


def _callers_keep_it_at_first_lanes(function: Node, root: Node, known: dict[bytes, int]) -> bool:
    """Every call of the helper in its translation unit stores the result in a name read only at first lanes."""
    name = function_name(function)
    takes = arity(function)
    calls = [c for c in _all(root, "call_expression") if name and callee_name(c) == name
             and fits(argument_count(c), takes) and _enclosing(c, "function_definition") is not function]
    for call in calls:
        caller = _enclosing(call, "function_definition")
        stored = _stored_in(call)
        if caller is None or stored is None:
            return False
        lanes = _first_lane_names(caller, known)
        if not all(_at_first_lane(read, caller, lanes, known) for read in _reads(caller, stored, call)):
            return False
    return bool(calls)


def _one_chain(function: Node, target: bytes, known: dict[bytes, int]) -> bool:
    """The function's down-shuffles of `target` are one chain whose offsets add up to 31 or less: one halving loop,
    or literals each used once."""
    offsets: list[bytes] = []
    for call in _all(function, "call_expression"):
        callee = call.child_by_field_name("function")
        arguments = call.child_by_field_name("arguments")
        if callee is not None and (callee.text or b"") == b"__shfl_down_sync" and arguments is not None \
                and len(arguments.named_children) >= 3 and arguments.named_children[1].text == target:
            offsets.append(arguments.named_children[2].text or b"")
    values = [evaluate(o, known) for o in offsets]
    if None in values:
        return len(offsets) == 1
    return len(set(values)) == len(values) and sum(v for v in values if v is not None) <= 31


def _small_offset(offset: Node, known: dict[bytes, int]) -> bool:
    text = offset.text or b""
    if (value := evaluate(text, known)) is not None:
        return value in _SMALL
    loop = _enclosing(offset, "for_statement")
    init = loop.child_by_field_name("initializer") if loop is not None else None
    update = loop.child_by_field_name("update") if loop is not None else None
    if init is None or update is None:
        return False
    head, _, start = (init.text or b"").partition(b"=")
    names = _NAME.findall(head)
    step = b" ".join((update.text or b"").split())
    name = re.escape(text)
    halves = re.fullmatch(name + rb"\s*(?:>>=\s*1|/=\s*2|=\s*" + name + rb"\s*(?:>>\s*1|/\s*2))", step)
    first = evaluate(start.strip().rstrip(b";"), known)
    return bool(names and names[-1] == text and halves and first in _SMALL)


def _reduced(call: Node, value: bytes) -> bytes | None:
    """The name a reduction step accumulates into: `v += shfl(v)`, `v = fmaxf(v, shfl(v))`."""
    current = call.parent
    while current is not None and current.type not in ("assignment_expression", "init_declarator"):
        if current.type in ("expression_statement", "compound_statement"):
            return None
        current = current.parent
    left = current.child_by_field_name("left") if current is not None else None
    if left is None or left.type != "identifier" or left.text != value:
        return None
    return value


def _stored_in(call: Node) -> bytes | None:
    """`x = helper(...)` or `T x = helper(...)`: x."""
    parent = call.parent
    if parent is not None and parent.type == "assignment_expression":
        left = parent.child_by_field_name("left")
        operator = parent.child_by_field_name("operator")
        return left.text if left is not None and left.type == "identifier" and operator is not None \
            and operator.type == "=" else None
    if parent is not None and parent.type == "init_declarator":
        declarator = parent.child_by_field_name("declarator")
        return declarator.text if declarator is not None and declarator.type == "identifier" else None
    return None


def _reads(function: Node, name: bytes, call: Node) -> list[Node]:
    """The uses of `name` in the function that may see the value the call produced: those after it (and, in a loop
    around it, anywhere in that loop), except the call's own arguments and plain assignments to the name."""
    loop = call.parent
    while loop is not None and loop is not function and loop.type not in _LOOPS:
        loop = loop.parent
    statement = _enclosing(call, "expression_statement") or _enclosing(call, "declaration") or call
    looping = loop is not None and loop is not function
    kill = None if looping else _kill(statement, name)
    found = []
    for node in _all(function, "identifier"):
        if node.text != name or statement.start_byte <= node.start_byte < statement.end_byte \
                or (kill is not None and node.start_byte >= kill):
            continue
        parent = node.parent
        operator = parent.child_by_field_name("operator") if parent is not None else None
        if parent is not None and parent.type == "assignment_expression" \
                and parent.child_by_field_name("left") == node and operator is not None and operator.type == "=":
            continue
        looped = looping and loop is not None and loop.start_byte <= node.start_byte < loop.end_byte
        if node.start_byte >= statement.end_byte or looped:
            if not _in_reduction(node, name):
                found.append(node)
    return found


def _kill(statement: Node, name: bytes) -> int | None:
    """Where the value is surely overwritten after `statement`: the first later `name = <expression without name>`
    in a block that holds the statement (so it runs whenever the statement did)."""
    child, block = statement, statement.parent
    while block is not None and block.type != "function_definition":
        if block.type == "compound_statement":
            for sibling in block.named_children:
                if sibling.start_byte <= child.start_byte or sibling.type != "expression_statement":
                    continue
                assignment = sibling.named_children[0] if sibling.named_children else None
                if assignment is None or assignment.type != "assignment_expression":
                    continue
                left = assignment.child_by_field_name("left")
                operator = assignment.child_by_field_name("operator")
                right = assignment.child_by_field_name("right")
                if left is not None and left.text == name and operator is not None and operator.type == "=" \
                        and right is not None and name not in _NAME.findall(right.text or b""):
                    return sibling.start_byte
        child, block = block, block.parent
    return None


def _in_reduction(node: Node, name: bytes) -> bool:
    """The use is a step of the same down-shuffle reduction (`v += __shfl_down_sync(m, v, 8)`)."""
    statement = _enclosing(node, "expression_statement")
    text = statement.text or b"" if statement is not None else b""
    return bool(re.search(rb"__shfl_down_sync\s*\([^,]+,\s*" + re.escape(name) + rb"\s*,", text))


def _returned(node: Node) -> bool:
    return node.parent is not None and node.parent.type == "return_statement"


def _at_first_lane(node: Node, function: Node, lanes: set[bytes], known: dict[bytes, int]) -> bool:
    """An `if` between the use and the function whose condition (or one conjunct of it) holds only at first lanes."""
    child, current = node, node.parent
    while current is not None and current is not function:
        if current.type == "if_statement":
            condition = current.child_by_field_name("condition")
            consequence = current.child_by_field_name("consequence")
            if condition is not None and consequence is not None and consequence.start_byte <= child.start_byte \
                    and _first_lane_condition(condition, lanes, known):
                return True
        child, current = current, current.parent
    return False


def _first_lane_condition(condition: Node, lanes: set[bytes], known: dict[bytes, int]) -> bool:
    text = b" ".join((condition.text or b"").split()).strip(b"()")
    for part in re.split(rb"\s*&&\s*", text):
        found = re.fullmatch(rb"\(?\s*(.+?)\s*\)?\s*==\s*0|0\s*==\s*\(?\s*(.+?)\s*\)?", part.strip(b"() "))
        if found and _first_lane_expression((found.group(1) or found.group(2)).strip(), lanes, known):
            return True
    return False


def _first_lane_names(function: Node, known: dict[bytes, int]) -> set[bytes]:
    """Names that are 0 only at a first lane: `int lane = threadIdx.x % 32;`, `tid = threadIdx.x`, a lane id masked
    with 31 (to a fixed point: `lane = tid & 0x1f` with `tid = threadIdx.x`)."""
    definitions: list[tuple[bytes, bytes]] = []
    for declarator in _all(function, "init_declarator"):
        target, value = declarator.child_by_field_name("declarator"), declarator.child_by_field_name("value")
        if target is not None and value is not None and target.type == "identifier":
            definitions.append((target.text or b"", value.text or b""))
    names: set[bytes] = set()
    assigned = {n for n, _ in definitions}
    counts = {n: sum(1 for m, _ in definitions if m == n) for n in assigned}
    changed = True
    while changed:
        changed = False
        for name, expression in definitions:
            if name not in names and counts[name] == 1 and _first_lane_expression(expression, names, known):
                names.add(name)
                changed = True
    return names


def _first_lane_expression(text: bytes, lanes: set[bytes], known: dict[bytes, int]) -> bool:
    """threadIdx.x, a first-lane name, or either taken modulo (or masked by one less than) a multiple of 32."""
    text = b" ".join(text.split())
    if _INDEX.match(text) or text.strip(b"() ") in lanes:
        return True
    found = _MODULO.match(text)
    if found is None:
        return False
    base, operator, amount = found.group(1), found.group(2), evaluate(found.group(3), known)
    if amount is None or not (_INDEX.match(base) or base.strip(b"() ") in lanes):
        return False
    return amount % 32 == 0 if operator == b"%" else amount >= 31 and (amount + 1) % 32 == 0


def _enclosing(node: Node, kind: str) -> Node | None:
    current = node.parent
    while current is not None and current.type != kind:
        current = current.parent
    return current


def _root(node: Node) -> Node:
    while node.parent is not None:
        node = node.parent
    return node
