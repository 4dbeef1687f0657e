"""A named full mask defined in a header (`#define FINAL_MASK 0xffffffff` in a reduce-utilities header) is used by
every file that includes it: its definition is fixed only when each of those uses is a full-warp use that the
literal mask's fix would make, judged in the file that holds it (its lanes, votes, widths, the project's shim)."""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from auditor.fix.cuda_fixes import Skip, full_mask
from auditor.fix.data import FixSpec
from auditor.fix.edits import FixContext
from auditor.fix.lanes import unparsed_regions, unseen_use
from auditor.fix.named_mask import judge_uses
from auditor.match.inputs.kinds import kinds_in_lane
from auditor.parse.cuda import parse
from auditor.run.scan.file import InputError, read_bytes
from auditor.types import Finding, SourceFile

_DEFINE = re.compile(rb"\s*#\s*define\s+(\w+)")
C_KINDS = kinds_in_lane("cuda")


def named_elsewhere(plan, specs: dict[str, FixSpec], files: Sequence[SourceFile], context: FixContext,
                    max_bytes: int) -> dict[str, str | None]:
    """name -> None when every use of the header's named mask in the project's other files is a full-warp use,
    else the first that is not (file:line and why)."""
    named: dict[str, tuple[str, Finding]] = {}
    for planned in plan.files:
        for finding in planned.findings:
            if specs[finding.rule_id].action == "named-mask" and finding.span.line:
                if found := _defined(planned.source, finding.span.line, max_bytes):
                    named.setdefault(found, (planned.source.path, finding))
    out: dict[str, str | None] = {}
    for name, (header, finding) in named.items():
        out[name] = _first_refusal(name.encode(), header, finding, files, context, max_bytes)
    return out


def _first_refusal(name: bytes, header: str, finding: Finding, files: Sequence[SourceFile], context: FixContext,
                   max_bytes: int) -> str | None:
    for source in files:
        if source.kind not in C_KINDS or source.path == header:
            continue
        data = _read(source, max_bytes)
        if not re.search(rb"\b" + re.escape(name) + rb"\b", data):
            continue
        tree = parse(data)
        regions = unparsed_regions(tree.tree.root_node) if tree.partial else []
        if regions and (where := unseen_use(name, regions)):
            return f"{source.path} {where}: named in code that did not parse"
        try:
            judge_uses(tree.tree.root_node, name, replace(finding, path=source.path), context, full_mask, Skip)
        except Skip as err:
            return f"{source.path}, {str(err).removesuffix('; report only')}"
    return None


def _defined(source: SourceFile, line: int, max_bytes: int) -> str | None:
    lines = _read(source, max_bytes).splitlines()
    found = _DEFINE.match(lines[line - 1]) if 0 < line <= len(lines) else None
    return found.group(1).decode("utf-8", "replace") if found else None


def _read(source: SourceFile, max_bytes: int) -> bytes:
    try:
        return read_bytes(source, max_bytes)
    except InputError:
        return b""
