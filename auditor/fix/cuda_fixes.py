"""C/C++/CUDA fixes: byte-exact edits at the tree-sitter nodes the findings point at, and one definition per file
(a full-mask macro, a sleep wrapper) inserted at file scope before its first use."""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from auditor.util.errors import AuditorError
from auditor.fix.data import FixSpec
from auditor.fix.edits import Edit, FileFix, FixContext, NO_CONTEXT, apply_edits, line_starts
from auditor.fix.compat import include_spelling, includes_home
from auditor.fix import definitions
from auditor.fix.definitions import FULL_MASK, SLEEP
from auditor.fix.named_mask import named_mask
from auditor.fix.warp32 import exchange_in_group
from auditor.fix.first_lane import first_lane_reduction
from auditor.fix.lanes import lane_limit, tensor_core_use, unparsed_limit, unparsed_regions, whole_warp_limit
from auditor.parse.cuda import WARP_SYNC_CALL, Node, parse
from auditor.types import Finding

NEWLINE = b"\n"
_MASK_IN_MACRO = re.compile(
    rb"((?:" + WARP_SYNC_CALL.encode() + rb")\s*\(\s*)"
    rb"(0[xX][fF]{8}[uUlL]*|~\s*0[uU]?|-\s*1|(?:uint32_t|unsigned(?:\s+int)?)\s*\(\s*-\s*1\s*\)"
    rb"|\(\s*(?:uint32_t|unsigned(?:\s+int)?)\s*\)\s*-\s*1)(?=\s*[,)])")
# `uint32_t(-1)`, `unsigned(-1)`: all 32 bits set, written as a functional cast
_FUNCTIONAL_ALL_ONES = re.compile(rb"^(?:uint32_t|unsigned(?:\s+int)?)\s*\(\s*-\s*1\s*\)$")
_RUNTIME_INDEX = re.compile(rb"threadIdx|blockDim|\b(?:tid|lane|lane_?id|laneid)\b")
# A project's own warp constants and tiles (WARP_SIZE, kWarpSize, NumWorkerWarpsPerBlock, tiled_partition<32>): the
# function counts 32-lane warps through them, so a warpSize-based lane or warp id would disagree with them.
_WARP_NAME = re.compile(rb"Warp|WARP|^(?!warpSize$)"
                        rb"(?i:.*warp_?size.*|threads_per_warp|tiled_partition|thread_block_tile)$")
_WARP_LITERAL = re.compile(rb"^(32|31|0[xX]1[fF]|5|0[xX][fF]{7}[eE]0)[uU]?$|^32\.0*[fF]?$")   # 0xffffffe0: ~31
# Warp-level work (shuffles, votes, a project's warp_reduce helpers) done in 32-lane groups stays consistent with
# 32-lane ids: TensorRT-LLM's blockReduceSum (`tid & 31`, `tid >> 5`, xor-shuffles from 16) is right on wave64 as
# written, and a warpSize-based lane id alone would lose half of each wavefront's sum.
_WARP_CALL = re.compile(rb"^(__shfl\w*|__ballot\w*|__any_sync|__all_sync|__match_\w+|__reduce_\w+_sync|__syncwarp"
                        rb"|__activemask|(?i:warp_?\w+|\w*_warp\w*))$")
_COMPILE_TIME = {"template_argument_list", "array_declarator", "static_assert_declaration", "case_statement",
                 "enumerator", "template_parameter_list", "field_declaration", "bitfield_clause"}
_NO_PARENS = {"parenthesized_expression", "init_declarator", "argument_list", "return_statement",
              "condition_clause", "expression_statement"}


_CUDA_VERSION_MACRO = re.compile(r"\b(?:__CUDACC_VER_MAJOR__|__CUDACC_VER_MINOR__|__CUDACC_VER__|CUDA_VERSION"
                                 r"|CUDART_VERSION)\b")
_LOOP_KINDS = {"for_statement", "while_statement", "do_statement", "for_range_loop"}
_VOTES = {"__ballot_sync", "__any_sync", "__all_sync", "__match_any_sync", "__match_all_sync"}


class Skip(AuditorError):
    """This finding is reported, not fixed; the message says why."""


def fix_cuda(text: str, findings: Sequence[Finding], specs: dict[str, FixSpec],
             context: FixContext = NO_CONTEXT) -> FileFix:
    source = text.encode("utf-8")
    tree = parse(source)
    # In a file that parsed only in part, a mask is fixed where its function parsed completely and no unparsed
    # code names it (auditor/fix/lanes.py); the other fixes need the whole file.
    regions = unparsed_regions(tree.tree.root_node) if tree.partial else []
    starts = line_starts(source)
    edits: list[Edit[bytes]] = []
    skipped: list[tuple[Finding, str]] = []
    placed: dict[str, int] = {}     # definition text -> insertion offset (before its first use)
    needed: set[str] = set()             # the names of the definitions the edits use
    for finding in findings:
        action = _ACTIONS[specs[finding.rule_id].action]
        try:
            if finding.span.line is None:
                raise Skip("the finding has no line")
            if regions and action is not full_mask:
                raise Skip("the file did not parse completely")
            offset = starts[finding.span.line - 1] + (finding.span.column or 1) - 1
            if regions and (why := unparsed_limit(_at(tree.tree.root_node, offset), regions)):
                raise Skip(f"the file parsed only in part and {why}")
            made, definition = action(tree.tree.root_node, offset, finding, context)
            at = _file_scope_start(tree.tree.root_node, offset)
            if regions and (before := [r for r in regions if r.start_byte < at]):
                # an unreadable `#if` above may open a branch the definition would land in (graph_step.cu)
                raise Skip(f"the file parsed only in part and the definition's place follows code that did not "
                           f"parse (line {before[0].start_point[0] + 1}): its preprocessor context is not known")
        except (Skip, IndexError, TypeError) as err:
            skipped.append((finding, str(err) or "no node at the finding's position"))
            continue
        edits.extend(made)
        if definition:
            needed.add(definition[0])
        if definition and definition[0] not in text:
            placed[definition[1]] = min(placed.get(definition[1], at), at)
    newline = "\r\n" if b"\r\n" in source[: source.find(b"\n") + 1] else "\n"   # the file's own line ends
    path = findings[0].path if findings else ""
    home = context.compat_header
    if placed and home and home != path:
        # the project's one header of the fixer's definitions: an include of it, unless the file includes it already
        at = min(placed.values())
        if not includes_home(source[:at], path, home):
            kept_lines = f'#include "{include_spelling(path, home)}"\n#line {source.count(NEWLINE, 0, at) + 1}\n'
            edits.append(Edit(at, at, kept_lines.replace("\n", newline).encode()))
    else:
        for definition, at in placed.items():
            # `#line` gives every later line its old number again: __LINE__ (device asserts) and nvcc's output kept
            kept_lines = f"{definition}#line {source.count(NEWLINE, 0, at) + 1}\n"
            edits.append(Edit(at, at, kept_lines.replace("\n", newline).encode()))
    new, kept, dropped = apply_edits(source, edits)
    skipped += [(e.finding, "overlaps another fix") for e in dropped if e.finding]
    applied = tuple(dict.fromkeys(e.finding for e in kept if e.finding))
    return FileFix(new.decode("utf-8"), applied, tuple(skipped), tuple(sorted(needed)) if applied else ())


def _at(root: Node, offset: int) -> Node:
    node = root.descendant_for_byte_range(offset, offset)
    if node is None:
        raise Skip("no matching code at the finding's position")
    return node


def _node_at(root: Node, offset: int, types: set[str]) -> Node:
    node = root.descendant_for_byte_range(offset, offset)
    while node is not None and not (node.type in types and node.start_byte == offset):
        if node.type == "preproc_arg":
            return node
        node = node.parent
    if node is None:
        raise Skip("no matching code at the finding's position")
    return node


def _in_macro(node: Node, pattern: re.Pattern[bytes], replacement: bytes, finding: Finding) -> list[Edit]:
    body = node.text or b""
    edits = [Edit(node.start_byte + m.start(2 if pattern.groups >= 2 else 0),
                  node.start_byte + m.end(2 if pattern.groups >= 2 else 0), replacement, finding)
             for m in pattern.finditer(body)]
    if not edits:
        raise Skip("the macro body has no form this fix knows")
    return edits


def full_mask(root: Node, offset: int, finding: Finding, context: FixContext):
    node = _node_at(root, offset, {"number_literal", "unary_expression", "cast_expression", "identifier",
                                   "call_expression"})
    definition = (FULL_MASK, definitions.FULL_MASK_DEFINITION)
    if node.type == "call_expression" and not _FUNCTIONAL_ALL_ONES.match(node.text or b""):
        raise Skip("no matching code at the finding's position")
    for name in _warp_functions(node):
        if name in context.shims:
            raise Skip(f"the project's own HIP shim redefines {name} ({context.shims[name]}) and drops the mask: "
                       "nothing to fix")
    if layout := tensor_core_use(root.text or b""):
        # DeepSpeed's evoformer mma_accum_lambda_iterator.h: xor 1 and 2 reduce a quad of NVIDIA's MMA layout
        raise Skip(f"tensor-core code ({layout.group(0).decode()}): its lanes follow NVIDIA's MMA fragment layouts, "
                   "which a port rewrites; report only")
    if users := context.tensor_core_only.get(finding.path):
        # SageAttention's math.cuh: PTX wrappers included only by its mma.sync/wgmma attention kernels
        raise Skip(f"a header included only by tensor-core code ({users}): a port rewrites those kernels and "
                   "what they include; report only")
    if unportable := _unportable_in_function(node, context.unportable.get(finding.path, ())):
        raise Skip(f"the function uses {unportable}: ported by rewriting")
    if votes := sorted(set(_warp_functions(node)) & _VOTES):
        raise Skip(f"a vote ({votes[0]}) over the 64-lane wavefront: where the code works in 32-lane warps it "
                   "counts two warps' lanes as one (and a 32-bit result keeps only the lower half); report only")
    arguments = node.parent.named_children if node.parent is not None else []
    if "__shfl_sync" in _warp_functions(node) and (node.type == "preproc_arg" or len(arguments) < 4):
        raise Skip("a shuffle from lane N without a width: on AMD it reads lane N of the 64-lane wavefront, on "
                   "NVIDIA lane N of each 32-lane warp, so where the code works in 32-lane warps the upper half "
                   "would read the lower half's value; give the width (32) or port the warp size; report only")
    if branch := _cuda_version_branch(node):
        raise Skip(f"in a branch for a CUDA compiler version ({branch}): HIP leaves that macro undefined and compiles "
                   "the other branch, so a fix changes nothing there")
    own_unit = finding.path.endswith((".cu", ".cpp", ".cc", ".cxx", ".c"))
    in_group = exchange_in_group(node, own_unit, context.constants)
    if not in_group and node.type != "preproc_arg" and first_lane_reduction(node, own_unit, context.constants):
        limited = whole_warp_limit(node, context.lane_limited, own_unit)
    else:
        limited = lane_limit(node, root, context.lane_limited_beyond_group if in_group else context.lane_limited,
                             in_group, own_unit)
    if limited:
        raise Skip(f"lane-limited code ({limited}): only some lanes run the call, and the exchange is not one that "
                   "stays in a 32-lane group (an xor-shuffle from 16 or less, a width of 32 or less), so on a 64-lane "
                   "wavefront it may read lanes that do not run it; report only")
    if node.type == "preproc_arg":
        return _in_macro(node, _MASK_IN_MACRO, FULL_MASK.encode(), finding), definition
    if asm := _inline_asm(node):
        raise Skip(f"the function has inline PTX (line {asm}): it is ported by rewriting, not by its mask; report only")
    if node.parent is None or node.parent.type != "argument_list" or node.parent.named_children[0] != node:
        raise Skip("the mask is not the first argument of a warp function")
    return [Edit(node.start_byte, node.end_byte, FULL_MASK.encode(), finding)], definition


def _unportable_in_function(node: Node, lines: tuple[tuple[int, str], ...]) -> str | None:
    """What Hopper/Blackwell-only code the function around `node` holds ('what at line N'), or None."""
    function = node.parent
    while function is not None and function.type != "function_definition":
        function = function.parent
    if function is None or not lines:
        return None
    first, last = function.start_point[0] + 1, function.end_point[0] + 1
    inside = [(line, what) for line, what in lines if first <= line <= last]
    return f"{inside[0][1]} at line {inside[0][0]}" if inside else None


def _cuda_version_branch(node: Node) -> str | None:
    """'line N: <condition>' when `node` is in the branch of `#if defined(__CUDACC_VER_MAJOR__) && ... >= 9` (or
    `#ifdef CUDA_VERSION`) that only a CUDA compiler takes (warp-ctc's reduce.cu: its #else is HIP's shuffle)."""
    child, current = node, node.parent
    while current is not None:
        if current.type in ("preproc_if", "preproc_ifdef", "preproc_elif"):
            alternative = current.child_by_field_name("alternative")
            in_alternative = alternative is not None and alternative.start_byte <= child.start_byte
            condition = current.child_by_field_name("condition") or current.child_by_field_name("name")
            text = (condition.text or b"").decode("utf-8", "replace") if condition is not None else ""
            negated = current.type == "preproc_ifdef" and (current.children[0].text or b"").strip() == b"#ifndef"
            if not in_alternative and not negated and _CUDA_VERSION_MACRO.search(text) \
                    and not re.search(r"!|<|\|\||HIP|ROCM", text, re.IGNORECASE):
                return f"line {current.start_point[0] + 1}: {' '.join(text.split())[:60]}"
        child, current = current, current.parent
    return None


def _inline_asm(node: Node) -> int | None:
    function = node.parent
    while function is not None and function.type != "function_definition":
        function = function.parent
    stack = [function] if function is not None else []
    while stack:
        current = stack.pop()
        if current.type == "gnu_asm_expression":
            return current.start_point[0] + 1
        stack.extend(current.named_children)
    return None


def _warp_functions(node: Node) -> list[str]:
    """The warp function(s) the mask at `node` is passed to (for a macro body: every one it calls)."""
    if node.type == "preproc_arg":
        return [m.group(1).split(b"(")[0].strip().decode() for m in _MASK_IN_MACRO.finditer(node.text or b"")]
    call = node.parent.parent if node.parent is not None else None
    callee = call.child_by_field_name("function") if call is not None and call.type == "call_expression" else None
    return [(callee.text or b"").decode("utf-8", "replace")] if callee is not None else []


def _lane_math(root: Node, offset: int, finding: Finding, context: FixContext):
    node = _node_at(root, offset, {"binary_expression"})
    if node.type == "preproc_arg":
        raise Skip("lane math in a macro: the macro may be used where a constant is needed; report only")
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    operator = node.child_by_field_name("operator")
    if left is None or right is None or operator is None or not _RUNTIME_INDEX.search(left.text or b""):
        raise Skip("not a thread index: the value may be a compile-time constant; report only")
    layout = tensor_core_use(root.text or b"")
    if layout:
        raise Skip(f"tensor-core code ({layout.group(0).decode()}): its lane ids follow NVIDIA's 32-lane fragment "
                   "layouts; report only")
    _require_device_runtime_context(node)
    op = operator.type
    if op in ("%", "/"):
        return [Edit(right.start_byte, right.end_byte, b"warpSize", finding)], None
    if op == "&":
        return [Edit(right.start_byte, right.end_byte, b"(warpSize - 1)", finding)], None
    if op == ">>":
        quotient = (left.text or b"") + b" / warpSize"
        if node.parent is None or node.parent.type not in _NO_PARENS:
            quotient = b"(" + quotient + b")"
        return [Edit(node.start_byte, node.end_byte, quotient, finding)], None
    raise Skip(f"operator {op} is not lane math this fix knows")


def _require_device_runtime_context(node: Node) -> None:
    """warpSize is a run-time value in device code: not usable in host code or where a constant is needed."""
    current = node.parent
    while current is not None:
        if current.type in _COMPILE_TIME or current.type.startswith("preproc"):
            raise Skip("used where a compile-time constant is needed; report only")
        if current.type == "declaration" and re.search(rb"\b(constexpr|static)\b", current.text or b""):
            raise Skip("declares a constant; report only")
        if current.type == "function_definition":
            body = current.child_by_field_name("body")
            head = (current.text or b"")[: (body.start_byte - current.start_byte) if body else None]
            if not re.search(rb"__(global|device)__", head):
                raise Skip("not in device code: warpSize is only defined in __global__/__device__ functions")
            _require_no_other_32(current)
            return
        current = current.parent
    raise Skip("not inside a function; report only")


def _require_no_other_32(function: Node) -> None:
    """Fixing one lane computation while the same function still counts 32 lanes elsewhere (`lane + 32`, inline
    PTX with its fixed fragment layout) makes it inconsistent on wave64: then report only. Array sizes such as
    `__shared__ float partial[32]` are upper bounds and do not count."""
    stack = [function]
    while stack:
        node = stack.pop()
        if node.type == "gnu_asm_expression":
            raise Skip(f"the function has inline PTX (line {node.start_point[0] + 1}); report only")
        if node.type == "array_declarator":
            continue
        if node.type == "declaration" and b"__shared__" in (node.text or b"").split(b"=")[0]:
            raise Skip(f"the function keeps shared memory that may be sized per 32-lane warp (line "
                       f"{node.start_point[0] + 1}); report only")
        if node.type == "call_expression":
            callee = node.child_by_field_name("function")
            name = (callee.text or b"").rsplit(b"::", 1)[-1].split(b"<", 1)[0] if callee is not None else b""
            if _WARP_CALL.match(name):
                raise Skip(f"the function also does warp-level work ({name.decode()}, line {node.start_point[0] + 1})"
                           " that may count 32 lanes; report only")
        if node.type in ("identifier", "type_identifier", "field_identifier") and _WARP_NAME.search(node.text or b""):
            raise Skip(f"the function counts warps with {(node.text or b'').decode()} "
                       f"(line {node.start_point[0] + 1}); report only")
        if node.type == "number_literal" and _counts_32_lanes(node) and not _is_lane_math(node):
            raise Skip(f"the function assumes 32 lanes elsewhere too (line {node.start_point[0] + 1}); report only")
        stack.extend(node.children)


def _counts_32_lanes(literal: Node) -> bool:
    if not _WARP_LITERAL.match(literal.text or b""):
        return False
    if (literal.text or b"").rstrip(b"uU") != b"5":
        return True
    operator = literal.parent.child_by_field_name("operator") if literal.parent is not None else None
    return operator is not None and operator.type in (">>", "<<")   # bid << 5: 32 per block (a COL32 tile)


def _is_lane_math(literal: Node) -> bool:
    parent = literal.parent
    if parent is None or parent.type != "binary_expression" or parent.child_by_field_name("right") != literal:
        return False
    left, operator = parent.child_by_field_name("left"), parent.child_by_field_name("operator")
    return (left is not None and operator is not None and operator.type in ("%", "/", "&", ">>")
            and bool(_RUNTIME_INDEX.search(left.text or b"")))


def _nanosleep(root: Node, offset: int, finding: Finding, context: FixContext):
    node = _node_at(root, offset, {"identifier"})
    definition = ("ROCM_AUDIT_NANOSLEEP", definitions.SLEEP_DEFINITION)
    if node.type == "preproc_arg":
        raise Skip("__nanosleep in a macro: whether its uses are back-offs or timed delays is not known; report only")
    if node.parent is None or node.parent.type != "call_expression":
        raise Skip("__nanosleep is not called here")
    loop: Node | None = node.parent
    while loop is not None and loop.type not in _LOOP_KINDS and loop.type != "function_definition":
        loop = loop.parent
    if loop is None or loop.type not in ("while_statement", "do_statement"):
        # flashinfer's delayStreamKernel: `for (i < delay_us) __nanosleep(1000)` holds a stream for a time
        raise Skip("a timed delay, not a back-off in a wait loop: s_sleep (about 64 clocks a step) would not wait "
                   "as long; report only")
    return [Edit(node.start_byte, node.end_byte, SLEEP.encode(), finding)], definition


def _file_scope_start(root: Node, offset: int) -> int:
    """Where a definition goes so that it is at file scope and before its use: after the last #include before
    the top-level declaration around `offset` (inside a header guard when there is one), else before that
    declaration and the comment that documents it, never between the two."""
    scope = root
    while True:
        node = scope.descendant_for_byte_range(offset, offset)
        while node is not None and node.parent is not None and node.parent != scope:
            node = node.parent
        if node is None or node == scope:
            return scope.start_byte
        if not _is_header_guard(node):
            break
        scope = node
    includes = [c for c in scope.children if c.end_byte <= node.start_byte and c.type == "preproc_include"]
    if includes:
        return includes[-1].end_byte
    first = node
    while (previous := first.prev_sibling) is not None and previous.type == "comment" \
            and previous.end_point[0] >= first.start_point[0] - 1:
        first = previous
    return first.start_byte - first.start_point[1]


def _is_header_guard(node: Node) -> bool:
    """`#ifndef X` whose first line inside is `#define X`."""
    if node.type != "preproc_ifdef" or not (node.text or b"").startswith(b"#ifndef"):
        return False
    name = node.child_by_field_name("name")
    inner = [c for c in node.named_children if c != name]
    first = inner[0] if inner else None
    defined = first.child_by_field_name("name") if first is not None and first.type == "preproc_def" else None
    return name is not None and defined is not None and defined.text == name.text


def _named_mask(root: Node, offset: int, finding: Finding, context: FixContext):
    edits = named_mask(root, offset, finding, context, full_mask, Skip, FULL_MASK)
    return edits, (FULL_MASK, definitions.FULL_MASK_DEFINITION)


DEFINING = frozenset({"full-mask", "named-mask", "nanosleep"})   # the actions whose edits use a definition
_ACTIONS: dict[str, Callable] = {"full-mask": full_mask, "warp-lane-math": _lane_math, "nanosleep": _nanosleep,
                                 "named-mask": _named_mask}
