"""Finding groups: the same rule on many lines of one file, or in many generated files of one template, is one
group with a count and its sites, so that a generated tree reads as a few problems rather than thousands of
rows. Pure functions over a report's findings; the JSON, SARIF, terminal and HTML renderers all use these."""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from auditor.types import Finding, Severity

_DIGITS = re.compile(r"\d+")


@dataclass(frozen=True, slots=True)
class FindingGroup:
    """One rule's sites in one file, or in several files of one directory whose sites read the same once
    numbers are ignored (files generated from one template: `kernel_hdim64.cu`, `kernel_hdim128.cu`)."""

    rule_id: str
    severity: Severity               # the most severe of its sites
    guarded: bool
    paths: tuple[str, ...]           # sorted
    indices: tuple[int, ...]         # every site, as indices into the findings given, in their order

    @property
    def count(self) -> int:
        return len(self.indices)

    def sort_key(self) -> tuple:
        """Most severe first, then the largest, then by rule and path: the order reports list groups in."""
        return (-int(self.severity), -self.count, self.rule_id, self.paths[0])


def _template(findings: Sequence[Finding], indices: list[int]) -> frozenset[str]:
    """What a file's sites of one rule look like with numbers ignored: two files generated from one template
    (and differing in tile sizes, head dims or dtypes' bit widths) have the same shape."""
    return frozenset(_DIGITS.sub("#", f"{findings[i].subject}\0{findings[i].snippet}") for i in indices)


def group_findings(findings: Sequence[Finding]) -> tuple[FindingGroup, ...]:
    """Every finding in exactly one group; groups sorted by FindingGroup.sort_key. Linear in the findings."""
    per_file: dict[tuple[str, bool, str], list[int]] = {}
    for index, finding in enumerate(findings):
        per_file.setdefault((finding.rule_id, finding.guarded, finding.path), []).append(index)
    merged: dict[tuple, tuple[list[str], list[int]]] = {}
    for (rule_id, guarded, path), indices in per_file.items():
        directory = str(PurePosixPath(path).parent)
        key = (rule_id, guarded, directory, _template(findings, indices))
        paths, sites = merged.setdefault(key, ([], []))
        paths.append(path)
        sites.extend(indices)
    groups = []
    for (rule_id, guarded, _directory, _shape), (paths, sites) in merged.items():
        sites.sort()
        groups.append(FindingGroup(
            rule_id=rule_id,
            severity=max(findings[i].severity for i in sites),
            guarded=guarded,
            paths=tuple(sorted(paths)),
            indices=tuple(sites),
        ))
    return tuple(sorted(groups, key=FindingGroup.sort_key))


def listed_findings(groups: Sequence[FindingGroup], total: int, limit: int, per_group: int) -> tuple[int, ...] | None:
    """Which findings a capped listing keeps, in findings order; None when all `total` fit under `limit`.
    Every group gets its first `per_group` sites (most severe groups first) before any group gets more, so
    the listing shows each kind of problem before it shows the thousandth site of one."""
    if total <= limit:
        return None
    kept: list[int] = []
    for group in groups:
        kept.extend(group.indices[:min(per_group, limit - len(kept))])
    for group in groups:   # room left: further sites, most severe groups first
        kept.extend(group.indices[per_group:per_group + max(0, limit - len(kept))])
    return tuple(sorted(kept))
