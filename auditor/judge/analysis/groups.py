"""Finding groups, the one grouping every renderer uses: the same rule in one file is one group, and the same rule
on the same subject across many files (a generated tree: one template, hundreds of instantiations) is one group
too; sites with different dispositions never share a group. A group has a count, its sites, its first site and
its effort, so a report shows hundreds of rows, not hundreds of thousands. Pure functions over findings that
already carry their disposition and hours (auditor/judge/analysis/assemble.py); the renderers decide how many sites
to show."""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from auditor.types import Finding, FindingGroup

ACROSS_FILES_MIN = 8     # the same rule and subject in this many files is one group, not one per file


def group_findings(findings: Sequence[Finding],
                   across_files_min: int = ACROSS_FILES_MIN) -> tuple[FindingGroup, ...]:
    """Every finding in exactly one group: rule + file, or rule + subject when that pair is found in
    `across_files_min` files or more; per disposition; sorted by FindingGroup.sort_key. Linear in the findings."""
    files_of: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    for f in findings:
        if f.subject:
            files_of[(f.rule_id, f.subject, f.disposition)].add(f.path)
    members: dict[tuple[str, str, bool, str], list[int]] = defaultdict(list)
    for i, f in enumerate(findings):
        spread = bool(f.subject) and len(files_of[(f.rule_id, f.subject, f.disposition)]) >= across_files_min
        members[(f.rule_id, f.subject if spread else f.path, spread, f.disposition)].append(i)
    groups = []
    for (rule_id, key, across, kind), indexes in members.items():
        indexes.sort(key=lambda i: findings[i].sort_key())
        sites = [findings[i] for i in indexes]
        groups.append(FindingGroup(
            rule_id=rule_id, key=key, across_files=across, disposition=kind, indexes=tuple(indexes),
            paths=tuple(dict.fromkeys(f.path for f in sites)),
            severity=max(f.severity for f in sites),
            low_hours=round(sum(f.hours[0] for f in sites), 2), high_hours=round(sum(f.hours[1] for f in sites), 2),
            guarded=all(f.guarded for f in sites),
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
        kept.extend(group.indexes[:min(per_group, limit - len(kept))])
    for group in groups:   # room left: further sites, most severe groups first
        kept.extend(group.indexes[per_group:per_group + max(0, limit - len(kept))])
    return tuple(sorted(kept))
