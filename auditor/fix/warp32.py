"""Code that keeps to one 32-lane group. Under `if (threadIdx.x < 32)` or `if (warp_id == 0)` the lanes that run a
call are the first 32 of the block: on AMD `__activemask()` (the fix's macro there) names exactly them, so a full
mask is right when the exchange itself stays inside a 32-lane group: an xor-shuffle with offsets up to 16 or a
shuffle with an explicit width up to 32. That is the second stage of a block reduction."""
from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType

from auditor.fix.calls import (argument_count, arity, callee_name, constants, evaluate, fits, function_name,
                               nodes_of, template_arguments, template_parameters)
from auditor.parse.cuda import Node

_INDEX = rb"(?:threadIdx\.x|tid|tidx|tid_x|thread_?id|threadId|lane|lane_?id|laneId)"
_WARP_ID = rb"(?:warp_?id|warpId|warp_idx|wid|warp|(?:threadIdx\.x|tid)\s*(?:/\s*(?:32|WARP_SIZE)|>>\s*5))"
_WIDTH = rb"(?:32|WARP_SIZE|WARPSIZE|kWarpSize|warpSize|warp_size|kThreadsPerWarp|THREADS_PER_WARP)"
_KEEPS = re.compile(rb"^(?:" + _INDEX + rb"\s*<\s*" + _WIDTH + rb"[uU]?|\(?" + _WARP_ID + rb"\)?\s*==\s*0)$")
_LEAVES = re.compile(rb"^(?:" + _INDEX + rb"\s*>=\s*" + _WIDTH + rb"[uU]?|\(?" + _WARP_ID + rb"\)?\s*(?:!=|>)\s*0)$")
_SMALL_OFFSET = re.compile(rb"^(?:16|8|4|2|1)[uU]?$|^(?:WARP_SIZE|kWarpSize|warp_size|kThreadsPerWarp)\s*/\s*2$")


def _bare(condition: Node) -> bytes:
    text = b" ".join((condition.text or b"").split())
    while text.startswith(b"(") and text.endswith(b")") and text.count(b"(") == text.count(b")"):
        text = text[1:-1].strip()
    return text


def keeps_one_group(condition: Node) -> bool:
    """`threadIdx.x < 32`, `warp_id == 0`: the branch runs the first 32 lanes of the block."""
    return bool(_KEEPS.match(_bare(condition)))


def leaves_one_group(condition: Node) -> bool:
    """`if (threadIdx.x >= 32) return;`: the lanes that go on are the first 32."""
    return bool(_LEAVES.match(_bare(condition)))


def exchange_in_group(mask: Node, own_unit: bool = False,
                      elsewhere: Mapping[bytes, int] = MappingProxyType({})) -> bool:
    """The shuffle around the mask reads only lanes of its own 32-lane group. In a translation unit (`own_unit`),
    a function template's offset or width written with its parameter (`W / 2`) is judged at every call of it there,
    with the template argument given (`group_sum<HALF_WARP>(v)`) or its default; every call must stay in a group."""
    arguments = mask.parent
    call = arguments.parent if arguments is not None else None
    callee = call.child_by_field_name("function") if call is not None else None
    if callee is None or arguments is None or arguments.type != "argument_list":
        return False
    args = arguments.named_children
    bindings = _bindings(mask, own_unit, elsewhere)
    if len(args) >= 4 and (re.match(rb"^" + _WIDTH + rb"[uU]?$|^(?:16|8|4|2)[uU]?$", args[3].text or b"")
                           or _every(bindings, lambda names: _at_most(args[3].text or b"", names, 32))):
        return True
    if (callee.text or b"") != b"__shfl_xor_sync" or len(args) < 3:
        return False
    offset = args[2].text or b""
    return bool(_SMALL_OFFSET.match(offset)) or _every(bindings, lambda names: _at_most(offset, names, 16)) \
        or _loop_from_16_down(args[2], offset, bindings)


def _at_most(expression: bytes, names: Mapping[bytes, int], most: int) -> bool:
    value = evaluate(expression, names)
    return value is not None and 0 < value <= most


def _every(bindings: list[dict[bytes, int]], test) -> bool:
    return bool(bindings) and all(test(names) for names in bindings)


def _bindings(node: Node, own_unit: bool, elsewhere: Mapping[bytes, int]) -> list[dict[bytes, int]]:
    """The values the names around `node` may take: the file's integer constants, and for a function template in
    a translation unit, its parameters' values at each call of it there (one binding per call). Empty when a call
    passes a value this file does not define (or the template is not called here): then nothing is known."""
    root = node
    while root.parent is not None:
        root = root.parent
    known = {**elsewhere, **constants(root.text or b"")}
    function = node.parent
    while function is not None and function.type != "function_definition":
        function = function.parent
    parameters = template_parameters(function) if function is not None else []
    if not parameters or not own_unit:
        return [known]
    name = function_name(function) if function is not None else None
    takes = arity(function) if function is not None else (0, None)
    found: list[dict[bytes, int]] = []
    for call in nodes_of(root, "call_expression"):
        if callee_name(call) != name or not fits(argument_count(call), takes):
            continue
        given = template_arguments(call)
        if given is None:
            return []
        names = dict(known)
        for index, (parameter, default) in enumerate(parameters):
            value = given[index] if index < len(given) else default
            if value is not None and (number := evaluate(value, known)) is not None:
                names[parameter] = number
        found.append(names)
    return found


def _loop_from_16_down(node: Node, name: bytes, bindings: list[dict[bytes, int]]) -> bool:
    """`for (int offset = 16; offset > 0; offset >>= 1)` (or /= 2) around the call; the start may be an expression
    of known values (`W / 2` with W = 16 at every call)."""
    current = node.parent
    while current is not None and current.type != "function_definition":
        if current.type == "for_statement":
            init = current.child_by_field_name("initializer")
            update = current.child_by_field_name("update")
            head, _, start = (init.text or b"").partition(b"=") if init is not None else (b"", b"", b"")
            if re.search(rb"\b" + re.escape(name) + rb"\s*$", head.strip()):
                step = b" ".join((update.text or b"").split()) if update is not None else b""
                halves = re.escape(name) + rb"\s*(?:>>=\s*1|/=\s*2|=\s*" + re.escape(name) + rb"\s*(?:>>\s*1|/\s*2))$"
                first = start.strip().rstrip(b";").strip()
                known = bool(_SMALL_OFFSET.match(first)) or all(_at_most(first, n, 16) for n in bindings) and bindings
                return bool(known) and bool(re.match(halves, step))
        current = current.parent
    return False
