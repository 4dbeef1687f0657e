"""The only module that imports tree-sitter: parse CUDA, C and C++ with the tree-sitter-cuda grammar."""
from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache

import tree_sitter as ts
import tree_sitter_cuda

from auditor.parse.conditionals import blank_lines, read_across
from auditor.parse.macroshapes import blank_macro_shapes

CUDA = ts.Language(tree_sitter_cuda.language())
Node = ts.Node   # what other modules annotate with, so that they need not import tree_sitter

# One pass collects everything the table-driven matchers look at.
INVENTORY_QUERY = """
(preproc_include path: (_) @include)
(gnu_asm_expression assembly_code: (_) @asm)
(identifier) @id
(type_identifier) @id
(field_identifier) @id
(namespace_identifier) @id
(qualified_identifier) @qualified
(call_expression function: (_) @call)
(preproc_arg) @macro_body
(function_definition) @function
"""


@dataclass(frozen=True, slots=True)
class CudaTree:
    tree: ts.Tree
    source: bytes
    others: tuple[ts.Tree, ...] = ()    # what `tree` left out, read across conditional directives (conditionals.py)
    unread: tuple[tuple[int, int], ...] = ()   # lines no tree holds
    recovered: tuple[ts.Tree, ...] = ()  # `tree` read again past its broken lines (one tree, or none)

    @property
    def alternatives(self) -> tuple[ts.Tree, ...]:
        """The trees besides `tree`: their code is read too, a node two trees share once."""
        return (*self.others, *self.recovered)

    @property
    def roots(self) -> tuple[ts.Node, ...]:
        return (self.tree.root_node, *(other.root_node for other in self.alternatives))

    @property
    def partial(self) -> bool:
        """Some code was not read: an ERROR node. A MISSING one (the `;` a statement macro leaves out, which the
        parser supplies) loses nothing, and does not count."""
        return bool(self.lost_lines())

    def lost_lines(self) -> tuple[tuple[int, int], ...]:
        """1-based (first, last) lines of each stretch of code the parser could not read."""
        lines = _lines(span for t in self.others for span in _lost(t.root_node)) | _lines(self.unread)
        return tuple(_spans(lines | _lost_everywhere((self.tree, *self.recovered))))

    def lost_text(self) -> str:
        """"syntax errors on lines 12-14, 40: scanned what parsed", or "" when nothing was lost."""
        spans = self.lost_lines()
        if not spans:
            return ""
        shown = ", ".join(f"{a}-{b}" if b > a else str(a) for a, b in spans[:5])
        more = f" and {len(spans) - 5} more" if len(spans) > 5 else ""
        return f"syntax errors on line{'s' if len(spans) > 1 or spans[0][1] > spans[0][0] else ''} {shown}{more}: " \
               "the code there was not scanned"


READ_ACROSS_BYTES = 4_000_000   # reading across conditionals parses the file again, up to 10 more times


def _lost(root: ts.Node) -> tuple[tuple[int, int], ...]:
    if not root.has_error:
        return ()
    spans: list[tuple[int, int]] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_error:
            spans.append((node.start_point[0] + 1, node.end_point[0] + 1))
        elif node.has_error:
            stack.extend(node.children)
    return tuple(sorted(spans))


def parse(source: bytes) -> CudaTree:
    """The tree of `source`, read after the macro shapes the grammar cannot read are blanked (same positions),
    and across the conditional directives that split a construct (conditionals.py)."""
    parser = ts.Parser(CUDA)
    readable = blank_macro_shapes(source)
    tree = parser.parse(readable)
    if not tree.root_node.has_error or len(readable) > READ_ACROSS_BYTES:
        return CudaTree(tree, readable)
    if b"#" not in readable:
        return CudaTree(tree, readable, (), *_past_broken_lines(parser, tree, readable))
    trees = {readable: tree}

    def tree_of(text: bytes) -> ts.Tree:
        if text not in trees:
            trees[text] = _reparse(parser, tree, readable, text)
        return trees[text]

    reading = read_across(readable, lambda text: _lost(tree_of(text).root_node))
    read = [tree_of(text) for text in reading.texts]
    blanked, recovered = _past_broken_lines(parser, read[0], reading.texts[0])
    return CudaTree(read[0], readable, tuple(read[1:]), tuple(sorted({*reading.unread, *blanked})), recovered)


RECOVERY_ROUNDS = 8
RECOVERY_BYTES = 8_000_000   # text re-parsed past broken lines, over all rounds: a file of broken lines stays cheap
_DIRECTIVE = re.compile(rb"^[ \t]*#")


def _past_broken_lines(parser: ts.Parser, tree: ts.Tree, text: bytes) -> tuple[tuple[tuple[int, int], ...],
                                                                               tuple[ts.Tree, ...]]:
    """Trees of `text` with the first line of each stretch the parser could not read blanked, round after round:
    a broken line (`template<typename T struct X {};`) swallows the code after it into one ERROR node, and a
    kernel there must still be read (a change must not hide an `asm` behind a syntax error). Directive lines
    are never blanked: the preprocessor's branches stay as they are. A round is kept only when it reads lines
    no earlier tree read; the rounds re-parse at most RECOVERY_BYTES in all. Returns the lines blanked and the
    last round's tree (blanking is cumulative, so it reads what the earlier rounds read: one tree, not eight, is
    kept in memory)."""
    best: ts.Tree | None = None
    blanked_lines: list[tuple[int, int]] = []
    lost = _lines(_lost(tree.root_node))
    for _ in range(min(RECOVERY_ROUNDS, RECOVERY_BYTES // max(len(text), 1))):
        lines = text.split(b"\n")
        firsts = [(a, a) for a, b in _lost(tree.root_node) if b > a and not _DIRECTIVE.match(lines[a - 1])]
        if not firsts:
            break
        blanked = blank_lines(text, tuple(firsts))
        tree, text = _reparse(parser, tree, text, blanked), blanked
        still = lost & (_lines(_lost(tree.root_node)) | _lines(firsts))
        if still == lost:
            break
        best = tree   # blanking is cumulative: the last tree reads what the earlier ones read
        blanked_lines += firsts
        lost = still
    return tuple(blanked_lines), (best,) if best is not None else ()


def _lines(spans: Iterable[tuple[int, int]]) -> set[int]:
    return {n for a, b in spans for n in range(a, b + 1)}


def _spans(lines: set[int]) -> list[tuple[int, int]]:
    """Runs of consecutive line numbers as (first, last)."""
    runs: list[tuple[int, int]] = []
    for n in sorted(lines):
        if runs and runs[-1][1] == n - 1:
            runs[-1] = (runs[-1][0], n)
        else:
            runs.append((n, n))
    return runs


def _lost_everywhere(trees: Sequence[ts.Tree]) -> set[int]:
    """The lines every tree lost: read by none of them."""
    lost = _lines(_lost(trees[0].root_node))
    for tree in trees[1:]:
        lost &= _lines(_lost(tree.root_node))
    return lost


def _reparse(parser: ts.Parser, tree: ts.Tree, old: bytes, new: bytes) -> ts.Tree:
    """The tree of `new`, a text of the same length and lines as `old` with some lines blanked: tree-sitter
    re-reads only around the changed lines and reuses the rest of `tree` (the tree of `old`, left as it is).
    A text mostly blanked is parsed afresh, which is then cheaper."""
    old_lines, new_lines = old.split(b"\n"), new.split(b"\n")
    changed = [n for n, (a, b) in enumerate(zip(old_lines, new_lines)) if a != b]
    if len(changed) * 2 > len(new_lines):
        return parser.parse(new)
    starts = [0]
    for line in old_lines:
        starts.append(starts[-1] + len(line) + 1)
    edited = tree.copy()
    run_start = 0
    for k, n in enumerate(changed):
        if k == 0 or changed[k - 1] != n - 1:
            run_start = n
        if k + 1 == len(changed) or changed[k + 1] != n + 1:   # the last line of a run of changed lines
            end = starts[n] + len(old_lines[n])
            edited.edit(start_byte=starts[run_start], old_end_byte=end, new_end_byte=end,
                        start_point=(run_start, 0), old_end_point=(n, len(old_lines[n])),
                        new_end_point=(n, len(old_lines[n])))
    return parser.parse(new, edited)


@cache
def compile_query(source: str) -> ts.Query:
    return ts.Query(CUDA, source)


def captures(query_source: str, tree: CudaTree) -> dict[str, list[ts.Node]]:
    """The captures of every tree of the file; a node the trees share (the same code read twice) once."""
    first = ts.QueryCursor(compile_query(query_source)).captures(tree.tree.root_node)
    if not tree.alternatives:
        return first
    found = {name: list(nodes) for name, nodes in first.items()}
    seen = {(name, _where(node)) for name, nodes in first.items() for node in nodes}
    for other in tree.alternatives:
        for name, nodes in ts.QueryCursor(compile_query(query_source)).captures(other.root_node).items():
            for node in nodes:
                if (name, _where(node)) not in seen:
                    seen.add((name, _where(node)))
                    found.setdefault(name, []).append(node)
    return found


def _where(node: ts.Node) -> tuple[int, int]:
    """Where a node is: two trees may read the same code as different kinds (a name as a type in one)."""
    return node.start_byte, node.end_byte


@dataclass(frozen=True)
class QueryGroup:
    """Several rules' queries compiled as one: tree-sitter compiles one query of N patterns about three
    times faster than N queries, and runs it in one pass over the tree."""

    query: ts.Query
    owner: tuple[int, ...]        # pattern index -> index of the source it came from


def compile_group(sources: tuple[str, ...]) -> QueryGroup:
    text = b""
    spans: list[tuple[int, int]] = []
    for source in sources:
        start = len(text)
        text += source.encode("utf-8") + b"\n"
        spans.append((start, len(text)))
    query = ts.Query(CUDA, text.decode("utf-8"))
    owner = tuple(
        next(i for i, (start, end) in enumerate(spans) if start <= query.start_byte_for_pattern(p) < end)
        for p in range(query.pattern_count)
    )
    return QueryGroup(query, owner)


def group_hits(group: QueryGroup, tree: CudaTree, capture: str = "hit") -> Iterator[tuple[int, ts.Node]]:
    """(index of the source, captured node) for every match of the group."""
    seen: set[tuple[int, tuple[int, int]]] = set()
    for root in tree.roots:
        for pattern, found in ts.QueryCursor(group.query).matches(root):
            for node in found.get(capture, ()):
                if tree.alternatives:
                    key = (group.owner[pattern], _where(node))
                    if key in seen:
                        continue
                    seen.add(key)
                yield group.owner[pattern], node


def inventory(tree: CudaTree) -> dict[str, list[ts.Node]]:
    return captures(INVENTORY_QUERY, tree)


# A query that only asks whether a called function's text matches a regex (the shape of most library rules):
# `((call_expression function: (_) @hit) (#match? @hit "^(::)?cudnn[A-Z]"))`.
_CALL_REGEX_QUERY = re.compile(
    r'^\(\(call_expression\s+function:\s*\(_\)\s*@hit\s*\)\s*\(#match\?\s+@hit\s+"((?:\\.|[^"\\])*)"\s*\)\s*\)$')


@cache
def call_regex(query_source: str) -> str | None:
    """The regex of a query of that shape, or None. Such a query matches exactly the `call` captures of the
    inventory whose text the regex finds (tree-sitter's #match? is a search): the engine runs it on them rather
    than in a query, which would walk every call of the tree once more for each such rule."""
    m = _CALL_REGEX_QUERY.match(query_source.strip())
    return re.sub(r"\\(.)", r"\1", m.group(1)) if m else None


def node_texts(nodes: Sequence[ts.Node]) -> list[bytes]:
    """The bytes of each node (b"" for none): an inventory's identifiers, read once for every lookup of them."""
    return [node.text or b"" for node in nodes]


# the warp functions whose first argument is a lane mask
WARP_SYNC_CALL = (r"__(?:shfl|shfl_up|shfl_down|shfl_xor|ballot|any|all|match_any|match_all|reduce_[a-z]+)_sync"
                  r"|__syncwarp")


def enclosing_function(node: ts.Node | None) -> ts.Node | None:
    """The function definition that holds `node` (the node itself when it is one), or None at file scope."""
    while node is not None and node.type != "function_definition":
        node = node.parent
    return node


def text(node: ts.Node) -> str:
    return node.text.decode("utf-8", "replace") if node.text is not None else ""


def string_content(node: ts.Node) -> str:
    """The characters of a string literal or a concatenation of them, quotes removed."""
    if node.type == "string_content":
        return text(node)
    return "".join(string_content(child) for child in node.children if child.type != '"')


def string_pieces(node: ts.Node) -> list[tuple[str, int, int]]:
    """The pieces string_content joins, each with its 1-based line and column: (text, line, column)."""
    if node.type == "string_content":
        return [(text(node), node.start_point[0] + 1, node.start_point[1] + 1)]
    return [piece for child in node.children if child.type != '"' for piece in string_pieces(child)]


def position(node: ts.Node) -> tuple[int, int, int]:
    """1-based (line, column, end line)."""
    return node.start_point[0] + 1, node.start_point[1] + 1, node.end_point[0] + 1
