"""The only module that imports libcst: parse Python once, with the metadata the engines need."""
from __future__ import annotations

import json
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider, QualifiedNameProvider

PROVIDERS = (QualifiedNameProvider, PositionProvider, ParentNodeProvider)


class PythonParseError(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class PythonTree:
    module: cst.Module
    metadata: dict  # provider -> {node: value}

    def qualified_names(self, node: cst.CSTNode) -> set[str]:
        found = self.metadata[QualifiedNameProvider].get(node, ())
        if callable(found):  # libcst resolves qualified names lazily
            found = found()
        return {q.name for q in found}

    def line(self, node: cst.CSTNode) -> tuple[int, int, int]:
        pos = self.metadata[PositionProvider][node]
        return pos.start.line, pos.start.column + 1, pos.end.line

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.metadata[ParentNodeProvider].get(node)


def parse(source: str) -> PythonTree:
    try:
        module = cst.parse_module(source)
        wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
        metadata = wrapper.resolve_many(PROVIDERS)
    except cst.ParserSyntaxError as err:
        raise PythonParseError(f"syntax error at line {err.raw_line}: {err.message}") from None
    except RecursionError:
        raise PythonParseError("nesting too deep to parse") from None
    return PythonTree(module, metadata)


@dataclass(frozen=True, slots=True)
class NotebookCode:
    source: str                          # code cells joined, magics blanked
    cells: tuple[tuple[int, int], ...]   # per line of `source`: (cell number, line in cell), 1-based
    shell_lines: tuple[tuple[int, str], ...]  # (line in `source`, command) for `!cmd` / `%pip` lines


def notebook_code(raw: str) -> NotebookCode:
    """The code cells of a Jupyter notebook as one Python text, with a map back to cells."""
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as err:
        raise PythonParseError(f"notebook is not valid JSON: {err}") from None
    cells = data.get("cells") if isinstance(data, dict) else None
    if not isinstance(cells, list):
        raise PythonParseError("notebook has no cell list")
    out: list[str] = []
    where: list[tuple[int, int]] = []
    shell: list[tuple[int, str]] = []
    for number, cell in enumerate(cells, start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        text = cell.get("source", "")
        text = "".join(text) if isinstance(text, list) else str(text)
        for line_no, line in enumerate(text.splitlines(), start=1):
            stripped = line.lstrip()
            if stripped.startswith(("!", "%")):
                shell.append((len(out) + 1, stripped.lstrip("!%")))
                line = ""
            out.append(line)
            where.append((number, line_no))
    return NotebookCode("\n".join(out) + "\n", tuple(where), tuple(shell))
