"""Code that keeps to one 32-lane group. Under `if (threadIdx.x < 32)` or `if (warp_id == 0)` the lanes that run a
call are the first 32 of the block: on AMD `__activemask()` (the fix's macro there) names exactly them, so a full
mask is right when the exchange itself stays inside a 32-lane group: an xor-shuffle with offsets up to 16 or a
shuffle with an explicit width up to 32. That is the second stage of a block reduction."""
from __future__ import annotations

import re

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


def exchange_in_group(mask: Node) -> bool:
    """The shuffle around the mask reads only lanes of its own 32-lane group."""
    arguments = mask.parent
    call = arguments.parent if arguments is not None else None
    callee = call.child_by_field_name("function") if call is not None else None
    if callee is None or arguments is None or arguments.type != "argument_list":
        return False
    args = arguments.named_children
    if len(args) >= 4 and re.match(rb"^" + _WIDTH + rb"[uU]?$|^(?:16|8|4|2)[uU]?$", args[3].text or b""):
        return True
    if (callee.text or b"") != b"__shfl_xor_sync" or len(args) < 3:
        return False
    offset = args[2].text or b""
    return bool(_SMALL_OFFSET.match(offset)) or _loop_from_16_down(args[2], offset)


def _loop_from_16_down(node: Node, name: bytes) -> bool:
    """`for (int offset = 16; offset > 0; offset >>= 1)` (or /= 2) around the call."""
    current = node.parent
    while current is not None and current.type != "function_definition":
        if current.type == "for_statement":
            init = current.child_by_field_name("initializer")
            update = current.child_by_field_name("update")
            head, _, start = (init.text or b"").partition(b"=") if init is not None else (b"", b"", b"")
            if re.search(rb"\b" + re.escape(name) + rb"\s*$", head.strip()):
                step = b" ".join((update.text or b"").split()) if update is not None else b""
                halves = re.escape(name) + rb"\s*(?:>>=\s*1|/=\s*2|=\s*" + re.escape(name) + rb"\s*(?:>>\s*1|/\s*2))$"
                return bool(_SMALL_OFFSET.match(start.strip().rstrip(b";").strip())) and bool(re.match(halves, step))
        current = current.parent
    return False
