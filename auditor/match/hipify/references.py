"""CUDA references in one parsed file, looked up in the HIPIFY API table (docs/hipify.md).

A reference is an occurrence in code of a name (or `#include`d header) the table knows: identifiers, type,
field and namespace names from the file's one tree-sitter inventory, plus the words of `#define` bodies
(which tree-sitter keeps as raw text). Comments and string literals are not code. Names the table does not
know (a project's own `cudaCheck` or `CUDA_KERNEL_LOOP`) are not references.
"""
from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from auditor.match.hipify.apitable import ApiEntry, ApiTable
from auditor.parse import cuda as ts_cuda
from auditor.types import FileCoverage

WORD = re.compile(r"[A-Za-z_]\w*")
NOT_CODE = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
# Findings whose hazard HIPIFY translates without a word (docs/hipify.md): a converted reference in the
# same function is not "clean after HIPIFY".
HAZARD_CATEGORIES = frozenset({"warp_size_assumption", "ptx_inline_asm", "hopper_only_feature"})
HAZARD_TRAIT = "hipify-hazard"   # auditor/match/rulebook/traits.py: shared memory above 64 KiB, FP8 format differences


@dataclass(frozen=True, slots=True)
class Reference:
    name: str
    line: int
    column: int
    entry: ApiEntry


def find_references(
    inventory: Mapping[str, list], table: ApiTable, dead: Collection[int] = (), id_texts: Sequence[bytes] | None = None
) -> tuple[Reference, ...]:
    """`id_texts`: the bytes of each of the inventory's `id` nodes, when the caller has them already."""
    found: list[Reference] = []

    def add(name: str, line: int, column: int, namespace: bool = False) -> None:
        entry = table.get(name)
        if entry is None or line in dead or (entry.kind == "namespace") != namespace:
            return
        found.append(Reference(name, line, column, entry))

    for node in inventory.get("include", ()):
        header = ts_cuda.string_content(node) if node.type == "string_literal" else ts_cuda.text(node)[1:-1]
        line, column, _ = ts_cuda.position(node)
        entry = table.get(header.strip())
        if entry is not None and entry.kind == "header" and line not in dead:
            found.append(Reference(header.strip(), line, column, entry))
    get, encoded = table.entries.get, table.encoded_names
    ids = inventory.get("id", ())
    for node, raw in zip(ids, id_texts if id_texts is not None else ts_cuda.node_texts(ids)):
        if encoded is not None and raw not in encoded:
            continue   # most identifiers are the project's own: no decoding, no position needed
        name = raw.decode("utf-8", "replace")
        if get(name) is None:
            continue
        line, column, _ = ts_cuda.position(node)
        add(name, line, column, namespace=node.type == "namespace_identifier")
    for node in inventory.get("macro_body", ()):
        first_line, first_column, _ = ts_cuda.position(node)
        body = NOT_CODE.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), ts_cuda.text(node))
        for m in WORD.finditer(body):
            before = body.count("\n", 0, m.start())
            column = m.start() - body.rfind("\n", 0, m.start()) if before else first_column + m.start()
            add(m.group(), first_line + before, column, namespace=body.startswith("::", m.end()))
    found.sort(key=lambda r: (r.line, r.column))
    return tuple(found)


def function_spans(inventory: Mapping[str, list]) -> list[tuple[int, int]]:
    """(first line, last line) of each function definition, outermost only, sorted."""
    spans = sorted((n.start_point[0] + 1, n.end_point[0] + 1) for n in inventory.get("function", ()))
    outer: list[tuple[int, int]] = []
    for start, end in spans:
        if outer and start <= outer[-1][1]:
            continue
        outer.append((start, end))
    return outer


def file_coverage(
    references: Iterable[Reference], hazard_lines: Collection[int], functions: list[tuple[int, int]]
) -> FileCoverage:
    """Counts for one file, the way hipify-perl -examine counts: every renamed or unsupported reference, a device
    function HIP spells the same once per file, the cub:: namespace not at all. A converted reference is clean
    unless a hazard sits in its function (or on its line, outside functions)."""
    starts = [start for start, _ in functions]

    def scope(line: int) -> tuple[int, int]:
        i = bisect_right(starts, line) - 1
        if i >= 0 and functions[i][0] <= line <= functions[i][1]:
            return functions[i]
        return (line, line)

    hazardous = {scope(line) for line in hazard_lines}
    converted = clean = 0
    unconverted: list[tuple[str, int]] = []
    disagree: Counter[tuple[str, bool]] = Counter()
    targets: Counter[str] = Counter()
    counted_once: set[str] = set()
    for ref in references:
        if ref.entry.kind == "namespace":
            continue    # hipify-perl renames cub:: to hipcub:: without counting it
        if ref.entry.converted and ref.entry.kind == "device" and ref.entry.hip == ref.name:
            if ref.name in counted_once:
                continue    # a device function HIP spells the same is counted once per file, as hipify-perl does
            counted_once.add(ref.name)
        if ref.entry.converted:
            converted += 1
            targets[ref.entry.target or "HIP"] += 1
            clean += scope(ref.line) not in hazardous
        else:
            unconverted.append((ref.name, ref.line))
        if ref.entry.converted != ref.entry.torch_converted:
            disagree[(ref.name, ref.entry.converted)] += 1
    return FileCoverage(
        converted=converted,
        clean=clean,
        unconverted=tuple(unconverted),
        disagreements=tuple((name, hipify, n) for (name, hipify), n in sorted(disagree.items())),
        targets=tuple(sorted(targets.items())),
    )
