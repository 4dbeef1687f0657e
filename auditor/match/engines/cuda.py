"""CUDA/C++ engine: includes, identifiers, inline asm and tree-sitter queries, with preprocessor guards."""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from auditor.match.engines import make_finding, snippet_of
from auditor.match.engines.cudaindex import CudaRuleIndex, index_rules, rule_key
from auditor.match.engines.directives import rocm_handled_beside
from auditor.match.engines.kernelscope import kernel_lacks
from auditor.parse import cuda as ts_cuda
from auditor.parse.preproc import DEFINED_MACRO, LineStates, line_states
from auditor.match.rulebook.prefilter import active_queries
from auditor.match.rulebook import Rulebook
from auditor.match.rulebook.context import ScanContext
from auditor.truth.cppcapability import cpp_capability_decides
from auditor.types import Finding, Rule, Span

# An instruction with at least one modifier (`ld.global.nc.v4.u32`), not a `.reg` declaration or register.
PTX_INSTRUCTION = re.compile(r"(?<![\w%.$])([a-z][a-z0-9_]*(?:\.[a-z0-9_:]+)+)")
PTX_WORD = re.compile(r"(?<![\w%.$])([a-z][a-z0-9_]*)")
# Categories whose findings on a line only a ROCm build compiles are HIP code written for ROCm: no 32-lane
# assumption there, and FP8 names there are the ROCm format already chosen (`typedef __hip_fp8_e4m3_fnuz …`).
# findings on a line only a ROCm build compiles that the code there was written for (a capability test inside
# `#if defined(X_USE_HIP)` compares AMD numbers): not a port item and not one to verify
HIP_BRANCH_CATEGORIES = frozenset({"warp_size_assumption", "hopper_only_feature", "runtime_check"})
# A line naming a HIP low-precision type converts to (or aliases) the ROCm format: the FP8 hazard is handled.
HIP_LOW_PRECISION_TYPE = re.compile(r"\b__hip_fp[468]|\bhip_fp8\b")


def _asm_subject(template: str, match: re.Match) -> str:
    """The instruction a rule matched: its `subject` group, else the first PTX instruction from the match."""
    if "subject" in match.re.groupindex and match.group("subject"):
        return match.group("subject")
    if match.group(0).startswith("%"):  # a special register: `%%laneid` in the C string is `%laneid`
        return "%" + match.group(0).lstrip("%")
    for pattern in (PTX_INSTRUCTION, PTX_WORD):
        found = pattern.search(template, match.start())
        if found:
            return found.group(1)
    return match.group(0).strip()


def scan_cuda(
    tree: ts_cuda.CudaTree,
    rulebook: Rulebook | ScanContext,
    path: str,
    kind: str,
    lines: list[str],
    line_offset: int = 0,
    states: LineStates | None = None,
    inventory: dict | None = None,
    id_texts: list[bytes] | None = None,
) -> list[Finding]:
    """`inventory` is the tree's ts_cuda.inventory() when the caller has it already (scan shares it with
    the HIPIFY reference count: the inventory query runs once per file), and `id_texts` its identifiers' bytes."""
    ctx = ScanContext.of(rulebook)
    index = ctx.derived(("cuda-index", kind), lambda: index_rules(tuple(
        r for r in ctx.family("cuda") if kind in r.cuda.files and r.cuda.hipify_status is None)))
    if not index.rules:
        return []
    if states is None:
        states = line_states(tree.source.decode("utf-8", "replace"), ctx.guards.preprocessor)
    raw: list[tuple[Rule, int, int | None, int, str, int]] = []   # (rule, line, column, end line, subject, shown)

    def hit(rule: Rule, node, subject: str, at: tuple[int, int] | None = None) -> None:
        """`at`: the line and column of what the node holds that the rule classifies (an asm statement's
        instruction): the finding spans the node, and shows (and is guarded by the preprocessor state of) that line."""
        line, col, end = ts_cuda.position(node)
        raw.append((rule, line, None if line_offset else col, max(end, line), subject, at[0] if at else line))

    if inventory is None:
        inventory = ts_cuda.inventory(tree)
    _name_hits(index, tree, inventory, hit, id_texts)
    if not path.endswith(".c"):   # C sources hold no device code
        _asm_hits(index, inventory, hit)
    _query_hits(index, ctx, tree, inventory, path, hit)
    return _findings(raw, states, path, lines, line_offset)


Hit = Callable[..., None]   # (rule, node, subject, at=None): one match of a rule at a node


def _name_hits(index: CudaRuleIndex, tree: ts_cuda.CudaTree, inventory: dict, hit: Hit,
               id_texts: list[bytes] | None = None) -> None:
    """Rules matching an included header, an identifier (or a symbol looked up by name), a qualified name."""
    for node in inventory.get("include", ()):
        header = ts_cuda.string_content(node) if node.type == "string_literal" else ts_cuda.text(node)[1:-1]
        for rule in index.rules_for_header(header):
            hit(rule, node, header)
    if index.exact_ids or index.glob_ids:
        ids = inventory.get("id", ())
        for node, name, found in index.id_matches(ids, id_texts if id_texts is not None else ts_cuda.node_texts(ids)):
            for rule in found:
                hit(rule, node, name)
        for node, name in _looked_up_symbols(tree):
            for rule in index.rules_for_id(name):
                hit(rule, node, name)
    if index.qualified:
        for node in inventory.get("qualified", ()):
            if node.parent is not None and node.parent.type == "qualified_identifier":
                continue  # only the outermost name: `a::b::c`, not its `b::c`
            for pattern, rule in index.rules_for_qualified(ts_cuda.text(node)):
                hit(rule, node, pattern)


def _asm_hits(index: CudaRuleIndex, inventory: dict, hit: Hit) -> None:
    """Rules matching the template of an inline-asm statement (PTX)."""
    for node in inventory.get("asm", ()):
        pieces = ts_cuda.string_pieces(node)
        template = "".join(piece for piece, _, _ in pieces)
        for regex, unless, rule in index.asm:
            m = regex.search(template)
            if m and not (unless and unless.search(template)):
                subject = _asm_subject(template, m)
                start = template.find(subject, m.start()) if subject in template[m.start():] else m.start()
                # reported at the statement (what a port wraps or replaces), showing the line of the instruction
                # it classifies (a multi-line asm spans many)
                hit(rule, node.parent or node, subject, _piece_position(pieces, start))


def _query_hits(index: CudaRuleIndex, ctx: ScanContext, tree: ts_cuda.CudaTree, inventory: dict, path: str,
                hit: Hit) -> None:
    """Rules with a tree-sitter query whose words the file holds: a call's regex over the inventory's calls,
    the others through the shared query groups."""
    lowered = tree.source.decode("utf-8", "replace").lower() if index.queries or index.calls else ""

    def query_hit(rule: Rule, node) -> None:
        if _in_functions(rule, node) and not _table_index(rule, node) and not _other_isa(rule, node, path) \
                and not kernel_lacks(rule, node) and _feeds_sync(rule, node) and not rocm_handled_beside(rule, node) \
                and not _alike_on_amd(rule, node, ctx):
            hit(rule, node, " ".join(ts_cuda.text(node).split())[:80])

    present = {rule_key(rule): rule for rule in _queries_present(index.calls + index.queries, lowered)}
    calls = [(regex, present[key]) for key, regex in index.call_regexes.items() if key in present]
    for node in inventory.get("call", ()) if calls else ():
        called = ts_cuda.text(node)
        for regex, rule in calls:
            if regex.search(called):
                query_hit(rule, node)
    active = {key: rule for key, rule in present.items() if key not in index.call_regexes}
    for group, members in query_groups(ctx).needed(list(active.values())):
        for owner, node in ts_cuda.group_hits(group, tree):
            matched = active.get(rule_key(members[owner]))
            if matched is not None:   # groups are shared across kinds and selections
                query_hit(matched, node)


SYMBOL_LOOKUP = re.compile(
    r"\b(?:dlsym|GetProcAddress|cuGetProcAddress(?:_v2)?|cudaGetDriverEntryPoint(?:ByVersion)?)\s*\(")
SYMBOL_QUERY = """
(call_expression function: (_) @fn arguments: (argument_list (string_literal) @sym)
  (#match? @fn "(^|::|[.>])(dlsym|GetProcAddress|cuGetProcAddress(_v2)?|cudaGetDriverEntryPoint(ByVersion)?)$"))
"""


def _looked_up_symbols(tree: ts_cuda.CudaTree) -> list[tuple[object, str]]:
    """CUDA functions loaded by name: `dlsym(lib, "cuTensorMapEncodeTiled")`, `cuGetProcAddress("cuMemCreate", ...)`."""
    source = tree.source
    if b"dlsym" not in source and b"GetProcAddress" not in source and b"DriverEntryPoint" not in source:
        return []   # (a substring test first: the regex over every file's text cost more than the rest)
    if not SYMBOL_LOOKUP.search(source.decode("utf-8", "replace")):
        return []
    found: list[tuple[object, str]] = []
    for node in ts_cuda.captures(SYMBOL_QUERY, tree).get("sym", ()):
        name = ts_cuda.string_content(node)
        if re.fullmatch(r"cu[A-Za-z]\w*|nvml\w+|nvrtc\w+", name):
            found.append((node, name))
    return found


def _piece_position(pieces: list[tuple[str, int, int]], offset: int) -> tuple[int, int] | None:
    """The source (line, column) of a character of a string made of these pieces."""
    for piece, line, column in pieces:
        if offset < len(piece):
            before = piece[:offset]
            newlines = before.count("\n")
            return line + newlines, (column + offset if not newlines else len(before) - before.rfind("\n"))
        offset -= len(piece)
    return None


def _other_isa(rule: Rule, node, path: str) -> bool:
    """An inline-asm query hit (asm in a macro body) in a C source, or one whose text the rule's `unless_asm`
    matches (another instruction set, a more specific class): not this rule's PTX."""
    if rule.cuda.asm is None:
        return False
    unless = rule.cuda.unless_asm
    return path.endswith(".c") or bool(unless and re.search(unless, ts_cuda.text(node)))


def _table_index(rule: Rule, node) -> bool:
    """A hit of a rule with `not_subscript` that is itself an array index (`table[tid & 31]`) and matches it."""
    pattern = rule.cuda.not_subscript
    if not pattern:
        return False
    parent = node.parent
    while parent is not None and parent.type == "parenthesized_expression":
        parent = parent.parent
    return parent is not None and parent.type == "subscript_argument_list" and bool(
        re.search(pattern, ts_cuda.text(node)))


def _alike_on_amd(rule: Rule, node, ctx: ScanContext) -> bool:
    """A comparison hit of a `capability` rule that picks the same side on every AMD GPU (`cc_major < 8`): no
    finding, as in Python (auditor/truth/cppcapability.py)."""
    if not rule.cuda.capability or node.type != "binary_expression":
        return False
    left, operator, right = (node.child_by_field_name(name) for name in ("left", "operator", "right"))
    if left is None or operator is None or right is None:
        return False
    return not cpp_capability_decides(ts_cuda.text(left), ts_cuda.text(operator), ts_cuda.text(right),
                                      ctx.guards.python)


def _in_functions(rule: Rule, node) -> bool:
    """A query hit of a rule with `in_functions` counts inside a function declared with one of them (any
    depth: a query can only say so level by level, which is slow to compile and to run)."""
    wanted = rule.cuda.in_functions
    if not wanted:
        return True
    function = ts_cuda.enclosing_function(node)
    return function is not None and any(child.type in wanted for child in function.children)


def _feeds_sync(rule: Rule, node) -> bool:
    """A hit of a rule with `sync_mask` that is a variable's initial value (`uint32_t m = (1U << n) - 1;`) counts
    only when the function passes that variable as the lane mask of a warp `*_sync` call: a 32-bit value built by
    a shift is as often a bit field of the data. Any other hit (the mask argument itself) counts."""
    if not rule.cuda.sync_mask or node.parent is None or node.parent.type != "init_declarator":
        return True
    declared = node.parent.child_by_field_name("declarator")
    function = ts_cuda.enclosing_function(node)
    if declared is None or function is None:
        return False
    name = re.escape(ts_cuda.text(declared))
    return re.search(rf"\b(?:{ts_cuda.WARP_SYNC_CALL})\s*\(\s*{name}\b", ts_cuda.text(function)) is not None


def _queries_present(rules: tuple[Rule, ...], lowered: str) -> tuple[Rule, ...]:
    sources = active_queries(tuple(rule.cuda.query or "" for rule in rules), lowered)
    return tuple(rule for rule in rules if rule.cuda.query in sources)


def queries_needed(rulebook: Rulebook | ScanContext, kind: str, text: str) -> tuple[Rule, ...]:
    """The query rules a file of this kind and text makes a scan compile."""
    rules = tuple(rule for rule in ScanContext.of(rulebook).family("cuda")
                  if rule.cuda.query is not None and kind in rule.cuda.files)
    return _queries_present(rules, text.lower()) if rules else ()


class QueryGroups:
    """The query groups compiled in this process, and the group each rule's query lives in. A rule is compiled the
    first time a file may match it (compiling is what costs: ~20 ms a query, ~8 ms in a group; tree-sitter holds
    the GIL meanwhile), together with the other rules first needed by the same file and with every rule planned
    for this process. Kept with the rulebook (a query's compiled form depends on its text alone), so every run
    with the same rulebook in this process shares them."""

    def __init__(self) -> None:
        self.groups: list[tuple[ts_cuda.QueryGroup, tuple[Rule, ...]]] = []
        self.group_of: dict[str, int] = {}
        self.planned: dict[str, Rule] = {}
        self.compiled_for: frozenset[str] = frozenset()   # the files (absolute paths) whose queries are compiled here

    def plan(self, rules: Iterable[Rule]) -> None:
        """Rules this process will need: they are compiled as one group when the first of them is needed (one
        group of N queries compiles about three times faster than N groups)."""
        for rule in rules:
            query = rule.cuda.query
            if query is not None and rule_key(rule) not in self.group_of and ts_cuda.call_regex(query) is None:
                self.planned[rule_key(rule)] = rule

    def covers(self, rules: Iterable[Rule]) -> bool:
        """Whether every query of these rules that must be compiled is."""
        return all(rule_key(rule) in self.group_of for rule in rules
                   if rule.cuda.query is not None and ts_cuda.call_regex(rule.cuda.query) is None)

    def needed(self, rules: list[Rule]) -> list[tuple[ts_cuda.QueryGroup, tuple[Rule, ...]]]:
        missing = tuple(rule for rule in rules if self.group_of.get(rule_key(rule)) is None)
        if missing and any(rule_key(rule) in self.planned for rule in missing):
            missing = tuple({rule_key(rule): rule for rule in (*missing, *self.planned.values())}.values())
            self.planned.clear()
        if missing:
            group = ts_cuda.compile_group(tuple(rule.cuda.query or "" for rule in missing))
            for rule in missing:
                self.group_of[rule_key(rule)] = len(self.groups)
            self.groups.append((group, missing))
        used = sorted({self.group_of[rule_key(rule)] for rule in rules})
        return [self.groups[i] for i in used]

    def compile_planned(self) -> None:
        """Compile every planned query now, as one group: a process that forks scanning workers many times (each
        point of `history`) compiles them once, and every worker inherits them."""
        if self.planned:
            self.needed(list(self.planned.values()))


def query_groups(rulebook: Rulebook | ScanContext) -> QueryGroups:
    """This process's compiled query groups of the rulebook (of a run's context, or of a rulebook alone)."""
    return ScanContext.of(rulebook).compiled(("cuda-query-groups",), QueryGroups)


def _findings(
    raw: Iterable[tuple[Rule, int, int | None, int, str, int]],
    states: LineStates,
    path: str,
    lines: list[str],
    line_offset: int,
) -> list[Finding]:
    seen: set[tuple[str, int, str]] = set()
    out: list[Finding] = []
    for rule, line, col, end, subject, shown in sorted(raw, key=lambda hit: (hit[1], hit[2] or 0, hit[0].id)):
        if shown in states.dead:
            continue
        if shown in states.rocm_only and rule.category in HIP_BRANCH_CATEGORIES and "warpsize" not in rule.name:
            continue   # written for ROCm (the #else of #ifndef USE_ROCM); the warpsize-as-constant rules are
                       # about HIP code itself and stay
        if rule.category == "hopper_only_feature" \
                and HIP_LOW_PRECISION_TYPE.search(snippet_of(lines, shown + line_offset)):
            continue
        key = (rule.id, line, subject)
        if key in seen:
            continue
        seen.add(key)
        guarded = shown in states.excluded or (
            DEFINITION_TRAIT in rule.traits and _every_use_excluded(lines, shown + line_offset, states, line_offset))
        out.append(make_finding(
            rule, path, Span(line + line_offset, col, end + line_offset), subject,
            snippet_of(lines, shown + line_offset), guarded=guarded,
        ))
    return out


# rules that report a constant's definition (fixing it fixes its uses): when every use in the file sits on a branch
# a ROCm build skips (mmcv's `FULL_MASK`, used only in the #else of `#ifdef MMCV_WITH_HIP`), the ROCm build never
# reads it, and the definition is as guarded as its uses
DEFINITION_TRAIT = "constant-definition"   # auditor/match/rulebook/traits.py
TEST_DIRECTIVE = re.compile(r"^\s*#\s*(?:if|ifdef|ifndef|elif|undef)\b")


def _every_use_excluded(lines: list[str], definition: int, states: LineStates, line_offset: int) -> bool:
    """The macro defined on file line `definition` is used in this file, and only on lines a ROCm build skips."""
    m = DEFINED_MACRO.match(lines[definition - 1]) if 1 <= definition <= len(lines) else None
    if m is None:
        return False
    name = re.compile(rf"\b{re.escape(m.group(1))}\b")
    uses = [number - line_offset for number, text in enumerate(lines, start=1)
            if number != definition and name.search(text) and not TEST_DIRECTIVE.match(text)]
    return bool(uses) and all(use in states.excluded or use in states.dead for use in uses)
