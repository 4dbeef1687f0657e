"""Python fixes with libcst, which rewrites losslessly (comments and formatting kept). Detection stays on `ast`;
libcst parses only the files that have a fix to apply."""
from __future__ import annotations

import ast
from collections.abc import Sequence

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider

from auditor.fix.data import FixSpec
from auditor.fix.edits import FileFix, FixContext, NO_CONTEXT
from auditor.types import Finding

IN_MESSAGE = "in the text of a message (an f-string, format, print, logging or an exception): report only"
_MESSAGE_CALLS = {"print", "warn", "warning", "info", "debug", "error", "exception", "critical", "log", "echo"}
VERSION_STAND_IN = '"0.0"'   # what a parse of torch.version.cuda sees on ROCm and CPU builds instead of None


def fix_python(text: str, findings: Sequence[Finding], specs: dict[str, FixSpec],
               context: FixContext = NO_CONTEXT) -> FileFix:
    try:
        wrapper = MetadataWrapper(cst.parse_module(text))
    except (cst.ParserSyntaxError, RecursionError):
        return FileFix(text, skipped=tuple((f, "libcst cannot parse the file") for f in findings))
    lines = text.splitlines()
    wanted: dict[tuple[int, int], Finding] = {}
    skipped: list[tuple[Finding, str]] = []
    for finding in findings:
        if specs[finding.rule_id].action != "torch-version-cuda" or finding.span.line is None:
            skipped.append((finding, "no Python fix for this finding"))
            continue
        wanted[(finding.span.line, _char_column(lines, finding))] = finding
    new, done, in_text = _transform(wrapper, wanted)
    skipped += [(wanted[key], IN_MESSAGE) for key in in_text]
    if not _valid(new, context.python) and _valid(text, context.python):
        # one fix at a time: each kept only if the file stays valid for the oldest Python the project supports
        accepted: dict[tuple[int, int], Finding] = {}
        for key in sorted(done):
            trial, _, _ = _transform(wrapper, {**accepted, key: wanted[key]})
            if _valid(trial, context.python):
                accepted[key] = wanted[key]
            else:
                oldest = ".".join(map(str, context.python))
                skipped.append((wanted[key], f"the fixed code is not valid Python {oldest} (the oldest it supports)"))
        new, done, _ = _transform(wrapper, accepted)
    skipped += [(f, "no torch.version.cuda expression at the finding's position")
                for key, f in wanted.items() if key not in done and key not in in_text
                and not any(s[0] is f for s in skipped)]
    return FileFix(new, tuple(done.values()), tuple(skipped))


def _transform(wrapper: MetadataWrapper, wanted: dict[tuple[int, int], Finding]):
    transformer = _TorchVersionCuda(wanted)
    return wrapper.visit(transformer).code, transformer.done, transformer.in_text


def _valid(code: str, version: tuple[int, int]) -> bool:
    """Parses as Python of that version (the grammar of f-strings and of new statements is checked)."""
    try:
        ast.parse(code, feature_version=version)
    except (SyntaxError, ValueError, RecursionError):
        return False
    return True


def _char_column(lines: list[str], finding: Finding) -> int:
    """ast columns count UTF-8 bytes; libcst's count characters. 0-based characters."""
    line = lines[finding.span.line - 1] if finding.span.line and finding.span.line <= len(lines) else ""
    return len(line.encode("utf-8")[: (finding.span.column or 1) - 1].decode("utf-8", "ignore"))


def _dotted(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        inner = _dotted(node.value)
        return None if inner is None else f"{inner}.{node.attr.value}"
    return None


class _TorchVersionCuda(cst.CSTTransformer):
    """torch.version.cuda is None on ROCm. Where it is compared with None by ==/!= (a vendor test), test
    `cuda or hip` instead; where it is parsed or compared with a version, read "0.0" instead of None."""

    METADATA_DEPENDENCIES = (PositionProvider, ParentNodeProvider)

    def __init__(self, wanted: dict[tuple[int, int], Finding]):
        super().__init__()
        self.wanted = wanted
        self.done: dict[tuple[int, int], Finding] = {}
        self.in_text: set[tuple[int, int]] = set()
        self._fstring_depth = 0
        self._targets: dict[int, tuple[tuple[int, int], str]] = {}

    def visit_FormattedString(self, node: cst.FormattedString) -> bool:
        self._fstring_depth += 1
        return True

    def leave_FormattedString(self, original: cst.FormattedString, updated: cst.FormattedString) -> cst.FormattedString:
        self._fstring_depth -= 1
        return updated

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        start = self.get_metadata(PositionProvider, node).start
        key = (start.line, start.column)
        name = _dotted(node)
        if key in self.wanted and name and name.endswith("version.cuda") and (self._fstring_depth or
                                                                               self._in_message(node)):
            self.in_text.add(key)
            return False
        if key in self.wanted and name and name.endswith("version.cuda"):
            parent = self.get_metadata(ParentNodeProvider, node)
            self._targets[id(node)] = (key, "test" if _is_none_equality(parent, node) else "parse")
            return False
        return True

    def _in_message(self, node: cst.CSTNode) -> bool:
        """An argument of print/logging/an exception, or formatted into a string: text, not a decision."""
        current = node
        for _ in range(8):
            parent = self.get_metadata(ParentNodeProvider, current, None)
            if parent is None or isinstance(parent, (cst.SimpleStatementLine, cst.IndentedBlock, cst.Module)):
                return False
            if isinstance(parent, cst.Call):
                called = _dotted(parent.func) or ""
                last = called.rsplit(".", 1)[-1]
                if isinstance(parent.func, cst.Attribute) and parent.func.attr.value == "format" and \
                        isinstance(parent.func.value, (cst.SimpleString, cst.ConcatenatedString)):
                    return True
                if last in _MESSAGE_CALLS or last.endswith(("Error", "Exception", "Warning")):
                    return True
            if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Modulo) and \
                    isinstance(parent.left, (cst.SimpleString, cst.ConcatenatedString)):
                return True
            current = parent
        return False

    def leave_Attribute(self, original: cst.Attribute, updated: cst.BaseExpression) -> cst.BaseExpression:
        target = self._targets.get(id(original))
        if target is None:
            return updated
        key, how = target
        code = cst.Module([]).code_for_node(original)
        other = code[: -len("cuda")] + "hip"
        fallback = other if how == "test" else VERSION_STAND_IN
        self.done[key] = self.wanted[key]
        return cst.parse_expression(f"({code} or {fallback})")


def _is_none_equality(parent: cst.CSTNode, node: cst.CSTNode) -> bool:
    if not isinstance(parent, cst.Comparison) or parent.left is not node:
        return False
    return all(isinstance(t.operator, (cst.Equal, cst.NotEqual)) and _dotted(t.comparator) == "None"
               for t in parent.comparisons)
