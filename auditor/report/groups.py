"""Findings -> finding groups: the same rule in one file is one group, and the same rule on the same subject
across many files (a generated tree: one template, hundreds of instantiations) is one group too. A group has
a count, its sites, its first site and its effort, so a report shows hundreds of rows, not hundreds of
thousands. Pure functions; the renderers decide how many sites to show."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Callable, Sequence

from auditor.types import Finding, Severity

ACROSS_FILES_MIN = 8     # the same rule and subject in this many files is one group, not one per file


@dataclass(frozen=True, slots=True)
class FindingGroup:
    rule_id: str
    key: str                          # the file, or the subject when the group spans files
    across_files: bool
    disposition: str                  # every site of a group has the same one
    indexes: tuple[int, ...]          # into the findings, in path and line order
    paths: tuple[str, ...]            # distinct files, in order
    severity: Severity                # the worst site's
    low_hours: float
    high_hours: float

    @property
    def count(self) -> int:
        return len(self.indexes)

    @property
    def first(self) -> int:
        return self.indexes[0]


def _live(finding: Finding) -> str:
    return "guarded" if finding.guarded else "live"


def group_findings(findings: Sequence[Finding], site_hours: Sequence[tuple[float, float]] = (),
                   disposition: Callable[[Finding], str] = _live,
                   across_files_min: int = ACROSS_FILES_MIN) -> tuple[FindingGroup, ...]:
    """Groups by rule + file, or rule + subject when that pair is found in `across_files_min` files or more;
    worst severity first, then costliest, then largest."""
    kinds = [disposition(f) for f in findings]
    files_of: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    for f, kind in zip(findings, kinds):
        if f.subject:
            files_of[(f.rule_id, f.subject, kind)].add(f.path)
    members: dict[tuple[str, str, bool, str], list[int]] = defaultdict(list)
    for i, (f, kind) in enumerate(zip(findings, kinds)):
        spread = f.subject and len(files_of[(f.rule_id, f.subject, kind)]) >= across_files_min
        members[(f.rule_id, f.subject if spread else f.path, bool(spread), kind)].append(i)
    groups = []
    for (rule_id, key, across, kind), indexes in members.items():
        indexes.sort(key=lambda i: findings[i].sort_key())
        hours = [site_hours[i] if i < len(site_hours) else (0.0, 0.0) for i in indexes]
        groups.append(FindingGroup(
            rule_id=rule_id, key=key, across_files=across, disposition=kind, indexes=tuple(indexes),
            paths=tuple(dict.fromkeys(findings[i].path for i in indexes)),
            severity=max(findings[i].severity for i in indexes),
            low_hours=round(sum(h[0] for h in hours), 2), high_hours=round(sum(h[1] for h in hours), 2),
        ))
    return tuple(sorted(groups, key=lambda g: (-g.severity, -g.high_hours, -g.count, g.rule_id, g.key)))
