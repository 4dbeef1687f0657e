"""Which lanes are active where a warp function is called. A full 64-bit mask is right on wave64 only where every
lane of the wavefront runs the call: under `if (tid < 32)`, after `if (threadIdx.x >= 32) return;`, in a loop
bounded by a thread index or in a `tiled_partition<16>` tile, HIP (>= 6.2) requires the mask to be the active
lanes, and its mask check traps (`__builtin_trap`) in builds without NDEBUG. Such code is lane-limited: the
full-mask fix is not offered there.

A condition is lane-dependent when it reads a thread or lane index, or a variable computed from one (`row =
blockIdx.x * blockDim.x + threadIdx.x`). Conditions on kernel arguments and block-uniform values are not."""
from __future__ import annotations

import re
from collections.abc import Mapping

from auditor.fix.calls import (Arity, argument_count, arity, call_key, callee_name, fits, limited_for,
                               function_name as _function_name, nodes_of as _nodes)
from auditor.fix.warp32 import keeps_one_group, leaves_one_group
from auditor.parse.cuda import Node

_THREAD_INDEX = re.compile(rb"^(?:threadIdx|laneid|lane_?id|laneId|lane|tid|thread_?id|threadId|__lane_id|thread_rank"
                           rb"|warp_?id|warpId|wid|local_?id|lid|tx|ty|tidx|tidy|lane_index|tid_?x|idx|gid)$")
_NAME = re.compile(rb"[A-Za-z_]\w*")
_TILE = re.compile(rb"\b(?:tiled_partition|thread_block_tile)\s*<")
# Code on NVIDIA's MMA fragment layouts (CUTLASS, CuTe, wmma, mma.sync/wgmma/ldmatrix PTX, and a project's own
# wrappers of them named by their shape: SageAttention's mma_sync_m16n16k32_row_col_s8s8s32, ldmatrix_m8n8x4): its
# lanes are the fragment's, which a port rewrites.
TENSOR_CORE_CODE = re.compile(rb"\bcute::|namespace cute\b|#\s*include\s*[<\"]cute/|\bcutlass::|\bwmma::|"
                              rb"\bmma\.sync\b|\bwgmma\w*|\b(?:ld|st)matrix\w*|\bw?mma_\w*?m(?:8|16|32|64)n\d+k\d+\w*")
_STRING_OR_COMMENT = re.compile(rb'"(?:\\.|[^"\\\n])*"|//[^\n]*|/\*.*?\*/', re.DOTALL)
_EXITS = {"return_statement", "break_statement", "continue_statement", "goto_statement"}
NEWLINE = b"\n"
_LOOPS = {"for_statement", "while_statement", "do_statement", "for_range_loop"}


def tensor_core_use(source: bytes) -> re.Match[bytes] | None:
    """The first tensor-core construct in code, comments aside (SageAttention's fused.cu only says `TODO: use
    ldmatrix`)."""
    code = _STRING_OR_COMMENT.sub(lambda m: m.group(0) if m.group(0).startswith(b'"') else b" ", source)
    return TENSOR_CORE_CODE.search(code)


def enclosing_function_name(root: Node, offset: int) -> str | None:
    node = root.descendant_for_byte_range(offset, offset)
    function = _enclosing_function(node) if node is not None else None
    name = _function_name(function) if function is not None else None
    return name.decode("utf-8", "replace") if name else None


def lane_limited_calls(root: Node, wanted: frozenset[str] | None = None, in_group: bool = False) -> dict[str, str]:
    """Calls this file makes from lane-limited code to functions it does not define itself (only of functions in
    `wanted`, when given): call_key (callee name and number of arguments, so an overload with another parameter
    count is not concerned) -> where and why. A helper defined in a header (warp_reduce_sum) is lane-limited where
    any file calls it so; a call that a definition in its own file fits reaches that one (kernel collections define
    a `warpReduceSum` in every program), never another file's. `in_group`: limits that keep one 32-lane group
    (`if (warp_id == 0)`) do not count."""
    out: dict[str, str] = {}
    own: dict[bytes, list[Arity]] = {}   # the functions this file defines: a call that fits one reaches it
    for function in _nodes(root, "function_definition"):
        if name := _function_name(function):
            own.setdefault(name, []).append(arity(function))
    for function in _nodes(root, "function_definition"):
        indexed: set[bytes] | None = None
        for call in _nodes(function, "call_expression"):
            name = callee_name(call)
            if not name or name.startswith(b"__") \
                    or (wanted is not None and name.decode("utf-8", "replace") not in wanted):
                continue
            key = call_key(name.decode(), argument_count(call))
            if key in out or any(fits(argument_count(call), takes) for takes in own.get(name, ())):
                continue
            indexed = _lane_dependent_names(function) if indexed is None else indexed
            if why := _limit_in_function(call, function, indexed, in_group):
                out[key] = f"line {call.start_point[0] + 1}: {why}"
    return out


def file_local(function: Node) -> bool:
    """A `static` function or one in an anonymous namespace: only its own translation unit calls it."""
    head = (function.text or b"").split(b"{", 1)[0]
    if re.search(rb"\bstatic\b", head):
        return True
    current = function.parent
    while current is not None:
        if current.type == "namespace_definition" and current.child_by_field_name("name") is None:
            return True
        current = current.parent
    return False


def unparsed_regions(root: Node) -> list[Node]:
    """The stretches of code the parser could not read (ERROR nodes): calls in them are not seen as calls."""
    found: list[Node] = []
    stack = [root] if root.has_error else []
    while stack:
        current = stack.pop()
        if current.is_error:
            found.append(current)
        elif current.has_error:
            stack.extend(current.children)
    return found


def unseen_use(name: bytes, regions: list[Node]) -> str | None:
    """Where `name` occurs in code that did not parse, as 'line N', or None."""
    pattern = re.compile(rb"\b" + re.escape(name) + rb"\b")
    for region in regions:
        text = region.text or b""
        if found := pattern.search(text):
            return f"line {region.start_point[0] + 1 + text.count(NEWLINE, 0, found.start())}"
    return None


def unparsed_limit(node: Node, regions: list[Node]) -> str | None:
    """In a file that parsed only in part: why the lanes around `node` cannot be judged, or None when its function
    (or macro) parsed completely, lies outside every unparsed stretch and is named in none of them."""
    if not regions:
        return None
    current = node.parent
    while current is not None and current.type not in ("function_definition", "preproc_function_def",
                                                        "preproc_def"):
        if current.is_error:
            return "the code around it did not parse"
        current = current.parent
    if current is None:
        return "not inside a function that parsed"
    if _contains_error(current):
        return f"its {'function' if current.type == 'function_definition' else 'macro'} did not parse completely"
    ancestor = current.parent
    while ancestor is not None:
        if ancestor.is_error:
            return "the code around it did not parse"
        ancestor = ancestor.parent
    name = _function_name(current) if current.type == "function_definition" else _macro_name(current)
    if name is None:
        return "its function has no name this analysis reads"
    where = unseen_use(name, regions)
    return f"{name.decode()} is named in code that did not parse ({where}): the lanes there are not known" \
        if where else None


def _contains_error(node: Node) -> bool:
    stack = [node] if node.has_error else []
    while stack:
        current = stack.pop()
        if current.is_error:
            return True
        stack.extend(c for c in current.children if c.has_error)
    return False


def _macro_name(define: Node) -> bytes | None:
    name = define.child_by_field_name("name")
    return name.text if name is not None else None


def lane_limit(node: Node, root: Node, limited_elsewhere: Mapping[str, str] | None = None,
               in_group: bool = False, own_unit: bool = False) -> str | None:
    """Why the call around `node` may run with only some lanes of a wavefront active, or None when it runs with
    all of them (as far as this file shows). `node` is in a function body or a macro's body (preproc_arg).
    `in_group`: the call exchanges within a 32-lane group, so limits that keep one such group do not count.
    `own_unit`: the file is a translation unit (not a header), whose file-local functions no other file calls."""
    if node.type == "preproc_arg":
        return _macro_limit(node, root)
    function = _enclosing_function(node)
    if function is None:
        return "not inside a function: the lanes that run it are not known"
    found = _limit_in_function(node, function, None, in_group)
    if found:
        return found
    name = _function_name(function)
    takes = arity(function)   # a call with another number of arguments reaches another overload
    elsewhere = limited_elsewhere if not (own_unit and file_local(function)) else None
    if name and elsewhere and (where := limited_for(elsewhere, name.decode(), takes)):
        return f"{name.decode()} is called from lane-limited code ({where})"
    for call in _calls_of(root, name) if name else ():
        if not fits(argument_count(call), takes):
            continue
        caller = _enclosing_function(call)
        if caller is not None and caller != function and (why := _limit_in_function(call, caller, None, in_group)):
            return f"called from lane-limited code (line {call.start_point[0] + 1}: {why})"
    return None


def whole_warp_limit(node: Node, limited_elsewhere: Mapping[str, str], own_unit: bool) -> str | None:
    """For a reduction read only at first lanes (auditor/fix/first_lane.py), which is right whatever condition
    decides the warps that run it: why it still cannot be judged (cooperative-group tiles, or a call from another
    file's lane-limited code, whose reads are not followed), or None."""
    function = _enclosing_function(node)
    if function is None:
        return "not inside a function: the lanes that run it are not known"
    if tile := _TILE.search(function.text or b""):
        return f"the function works in cooperative-group tiles ({tile.group(0).decode().rstrip('< ')})"
    name = _function_name(function)
    elsewhere = limited_elsewhere if not (own_unit and file_local(function)) else None
    if name and elsewhere and (where := limited_for(elsewhere, name.decode(), arity(function))):
        return f"{name.decode()} is called from lane-limited code ({where})"
    return None


def _macro_limit(arg: Node, root: Node) -> str | None:
    define = arg.parent
    name_node = define.child_by_field_name("name") if define is not None else None
    name = name_node.text if name_node is not None else None
    uses = list(_calls_of(root, name)) if name else []
    if not uses:
        return "a macro not used in this file: the lanes active where it is used are not known"
    for use in uses:
        function = _enclosing_function(use)
        why = _limit_in_function(use, function) if function is not None else "used outside a function"
        if why:
            return f"the macro is used in lane-limited code (line {use.start_point[0] + 1}: {why})"
    return None


def _limit_in_function(node: Node, function: Node, indexed: set[bytes] | None = None,
                       in_group: bool = False) -> str | None:
    text = function.text or b""
    if tile := _TILE.search(text):
        return f"the function works in cooperative-group tiles ({tile.group(0).decode().rstrip('< ')})"
    indexed = _lane_dependent_names(function) if indexed is None else indexed
    found: list[tuple[bool, str]] = []   # (reads a thread index itself, why); the direct reason is the clearer one
    child, current = node, node.parent
    while current is not None and current != function:
        condition = _condition_guarding(current, child)
        if condition is not None and _reads(condition, indexed - _own_uniform_counter(current, indexed)) \
                and not (in_group and keeps_one_group(condition)):
            found.append((_reads(condition, set()), f"line {condition.start_point[0] + 1}: {_shown(condition)}"))
        if current.type == "compound_statement":
            for statement in current.named_children:
                if statement == child:
                    break
                if (exit_ := _lane_dependent_exit(statement, indexed)) is not None \
                        and not (in_group and leaves_one_group(exit_)):
                    found.append((_reads(exit_, set()),
                                  f"line {exit_.start_point[0] + 1}: {_shown(exit_)} leaves lanes behind"))
        child, current = current, current.parent
    ranked = [why for is_direct, why in found if is_direct] + [why for is_direct, why in found if not is_direct]
    return ranked[0] if ranked else None


def _condition_guarding(current: Node, child: Node) -> Node | None:
    """The condition deciding whether `child` (a part of `current`) runs, if `current` decides that."""
    if current.type in ("if_statement", "switch_statement", "conditional_expression") or current.type in _LOOPS:
        condition = current.child_by_field_name("condition")
        if condition is not None and condition != child:
            return condition
    if current.type == "binary_expression":
        operator = current.child_by_field_name("operator")
        left = current.child_by_field_name("left")
        if operator is not None and operator.type in ("&&", "||") and left is not None and left != child:
            return left
    return None


def _own_uniform_counter(loop: Node, indexed: set[bytes]) -> set[bytes]:
    """`for (int k = 0; k < n; ++k)`: the loop's own counter, declared with a lane-independent start, is uniform
    here even when the same name is computed from a thread index elsewhere in the function."""
    if loop.type != "for_statement":
        return set()
    init = loop.child_by_field_name("initializer")
    if init is None or init.type != "declaration":
        return set()
    head, _, tail = (init.text or b"").partition(b"=")
    names = _NAME.findall(head)
    return {names[-1]} if names and tail and not _reads_text(tail, indexed) else set()


def _lane_dependent_exit(statement: Node, indexed: set[bytes]) -> Node | None:
    """An `if` before the call that, on a lane-dependent condition, returns (or breaks out of the block around
    the call) for some lanes. A `break` or `continue` inside a loop that ends before the call leaves no lane
    behind at the call."""
    stack = [(statement, False)]
    while stack:
        current, in_loop = stack.pop()
        if current.type == "if_statement":
            condition = current.child_by_field_name("condition")
            if condition is not None and _reads(condition, indexed) and _has_exit(current, in_loop):
                return condition
        if current.type in ("function_definition", "lambda_expression"):
            continue
        stack.extend((child, in_loop or current.type in _LOOPS) for child in current.named_children)
    return None


def _has_exit(node: Node, in_loop: bool) -> bool:
    exits = _EXITS - {"break_statement", "continue_statement"} if in_loop else _EXITS
    stack = list(node.named_children)
    while stack:
        current = stack.pop()
        if current.type in exits:
            return True
        if current.type not in _LOOPS and current.type != "lambda_expression":
            stack.extend(current.named_children)
    return False


def _lane_dependent_names(function: Node) -> set[bytes]:
    """Thread/lane index names, and the variables assigned from them (to a fixed point)."""
    names: set[bytes] = set()
    assignments: list[tuple[bytes, bytes]] = []
    stack = [function]
    while stack:
        current = stack.pop()
        if current.type in ("init_declarator", "assignment_expression"):
            target = current.child_by_field_name("declarator" if current.type == "init_declarator" else "left")
            value = current.child_by_field_name("value" if current.type == "init_declarator" else "right")
            if target is not None and value is not None:
                found = _NAME.findall(target.text or b"")
                if found:
                    assignments.append((found[0], value.text or b""))
        if current.type == "for_statement":   # `for (int i = tid; ...)`: the loop variable follows the index
            init = current.child_by_field_name("initializer")
            if init is not None and "=" in (init.text or b"").decode("utf-8", "replace"):
                head, _, tail = (init.text or b"").partition(b"=")
                found = _NAME.findall(head)
                if found:
                    assignments.append((found[0], tail))
        stack.extend(current.named_children)
    changed = True
    while changed:
        changed = False
        for assigned, source in assignments:
            if assigned not in names and _reads_text(source, names):
                names.add(assigned)
                changed = True
    return names


def _reads(node: Node, indexed: set[bytes]) -> bool:
    return _reads_text(node.text or b"", indexed)


def _reads_text(text: bytes, indexed: set[bytes]) -> bool:
    return any(_THREAD_INDEX.match(name) or name in indexed for name in _NAME.findall(text))


def _enclosing_function(node: Node) -> Node | None:
    current = node.parent
    while current is not None and current.type != "function_definition":
        current = current.parent
    return current


def _calls_of(root: Node, name: bytes):
    return (call for call in _nodes(root, "call_expression") if callee_name(call) == name)


def _shown(node: Node) -> str:
    text = (node.text or b"").decode("utf-8", "replace")
    return " ".join(text.split())[:60]
