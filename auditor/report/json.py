"""Report -> JSON (report/schema/report.schema.json). That schema file is the contract's test."""
from __future__ import annotations

import json
from collections import Counter

from auditor import __version__
from auditor.judge.analysis.groups import listed_findings
from auditor.report.view import category_of, lines_scanned, live_by_severity
from auditor.model.rocmpath.model import RocmPath
from auditor.judge.incomplete import closed_failures
from auditor.types import CATEGORIES, Coverage, Effort, FindingGroup, Report, Severity

SCHEMA_VERSION = 1
# Caps that keep the JSON of a huge generated tree small enough to load; every count stays exact, and the
# summary says when a list was cut (findings_listed, groups_listed).
FINDINGS_LISTED = 10_000
GROUPS_LISTED = 2_000
SITES_PER_GROUP = 10
PATHS_PER_GROUP = 20
LOCATIONS_PER_NAME = 100


def finding_dict(report: Report, index: int) -> dict:
    f = report.findings[index]
    rule = report.rules.get(f.rule_id)
    low, high = f.hours
    message = f"{f.message} ({f.detail})" if f.detail else f.message
    return {
        "rule": f.rule_id,
        "name": rule.name if rule else f.rule_id,
        "category": category_of(report, f),
        "severity": f.severity.label,
        "path": f.path,
        "line": f.span.line,
        "column": f.span.column,
        "end_line": f.span.end_line,
        "message": message,
        "snippet": f.snippet,
        "rocm_alternative": rule.rocm_alternative if rule else None,
        "guarded": f.guarded,
        "would_break": report.breaks(f),
        "new": f.new,
        "fingerprint": f.fingerprint,
        "effort_hours": [round(low, 2), round(high, 2)],
        "subject": f.subject,
        "optional": f.counted_optional,
        "disposition": f.disposition,
        "disposition_note": f.disposition_note,
    }


def report_dict(report: Report) -> dict:
    by_severity = {s.label: 0 for s in sorted(Severity, reverse=True)}
    by_category = {c: 0 for c in CATEGORIES}
    for f in report.findings:
        by_severity[f.severity.label] += 1
        by_category[category_of(report, f)] += 1
    live_by_category = {c: 0 for c in CATEGORIES}
    for i in report.gated():
        live_by_category[category_of(report, report.findings[i])] += 1
    cov = report.coverage
    groups = report.groups
    listed = listed_findings(groups, len(report.findings), FINDINGS_LISTED, SITES_PER_GROUP)
    shown = range(len(report.findings)) if listed is None else listed
    return {
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "rocm-audit", "version": __version__},
        "root": report.root,
        "summary": {
            "files_scanned": len(report.results),
            "files_partial": sum(1 for r in report.results if r.partial),
            "files_failed": sum(1 for r in report.results if r.error),
            "lines_scanned": lines_scanned(report),
            "findings": len(report.findings),
            "findings_listed": len(shown),
            "findings_truncated": listed is not None,
            "groups": len(groups),
            "groups_listed": min(len(groups), GROUPS_LISTED),
            "by_severity": by_severity,
            "by_category": by_category,
            "verdict": report.verdict,
            "verdict_reason": report.verdict_reason,
            "by_disposition": dict(sorted(Counter(f.disposition for f in report.findings).items())),
            "would_break": len(report.gated()),
            "live_by_severity": live_by_severity(report),
            "live_by_category": live_by_category,
            "notes_by_disposition": report.not_breaking(),
            "fail_on_verify": report.fail_on_verify,
            "suppressed": report.suppressed,
            "skipped_vendored": list(report.vendored),
        },
        "components": [
            {"path": c.path, "verdict": c.verdict, "rocm_build": c.rocm_build, "reason": c.reason,
             "optional": c.optional, "kind": c.kind, "live_findings": c.live,
             "rocm_path": c.rocm_path.as_dict() if isinstance(c.rocm_path, RocmPath) else None}
            for c in report.components
        ],
        "findings": [finding_dict(report, i) for i in shown],
        "groups": [group_dict(report, group) for group in groups[:GROUPS_LISTED]],
        "partial": [{"path": path, "reason": reason} for path, reason in partial_files(report)],
        "coverage": coverage_dict(cov),
        "effort": effort_dict(report.effort),
        "errors": [{"path": path, "message": message} for path, message in report.errors],
        "warnings": [{"path": path, "line": line, "message": message} for path, line, message in report.warnings],
        "gate": _gate(report),
        "complete": report.complete,
        "fails_closed": [{"path": path, "message": sentence} for path, sentence in closed_failures(report)],
    }


def group_dict(report: Report, group: FindingGroup) -> dict:
    """One finding group (judge/analysis/groups.py): the rule, how many sites in how many files, the first sites (the
    rest are in `findings` unless that list was cut too), its disposition, what it is keyed by and its hours."""
    first = report.findings[group.first]
    rule = report.rules.get(group.rule_id)
    out = {
        "rule": group.rule_id,
        "name": rule.name if rule else group.rule_id,
        "category": category_of(report, first),
        "severity": group.severity.label,
        "guarded": group.guarded,
        "message": first.message,
        "count": group.count,
        "files": len(group.paths),
        "paths": list(group.paths[:PATHS_PER_GROUP]),
        "sites": [_site(report.findings[i]) for i in group.indexes[:SITES_PER_GROUP]],
        "disposition": group.disposition,
        "key": group.key,
        "across_files": group.across_files,
        "effort_hours": [group.low_hours, group.high_hours],
    }
    if report.gate is not None:
        out["new"] = sum(1 for i in group.indexes if report.findings[i].new)
    return out


def _site(f) -> dict:
    return {"path": f.path, "line": f.span.line, "column": f.span.column, "subject": f.subject,
            "snippet": f.snippet}


def partial_files(report: Report) -> list[tuple[str, str]]:
    """(path, reason) of each file scanned only in part: syntax errors, or text that was not UTF-8."""
    out = []
    for result in report.results:
        if result.partial:
            reason = result.facts.partial_reason or "parsed in part"
            out.append((result.path, reason))
    return out


def _gate(report: Report) -> dict | None:
    """What `new` was measured against, or null when every finding counts (no baseline or git base)."""
    if report.gate is None:
        return None
    new, known = report.counts()
    return {
        "mode": report.gate.mode,
        "against": report.gate.against,
        "new": new,
        "known": known,
        "gone": [{"rule": rule, "path": path, "subject": subject, "count": count}
                 for rule, path, subject, count in report.gate.gone],
        "changed_files": report.gate.changed_files,
    }


HOTSPOTS = 20


def effort_dict(effort: Effort) -> dict:
    """report/schema/report.schema.json `effort`, plus: HIPIFY review and validation (also in the total), the costliest
    top-level directories and files (in hours), and every constant the model used with its source."""
    return {
        "low_days": effort.low_days,
        "high_days": effort.high_days,
        "by_category": {cat: [low, high] for cat, low, high in effort.by_category},
        "hipify_review_days": list(effort.hipify_review),
        "validation_days": list(effort.validation),
        "kernel_files": effort.kernel_files,
        "hipify_review_files": len(effort.reviewed_files),
        "by_directory": {name: [low, high] for name, low, high in effort.by_directory},
        "hotspots": [{"path": path, "hours": [low, high]} for path, low, high in effort.by_file[:HOTSPOTS]],
        "assumptions": [{"name": a.name, "value": a.value, "source": a.source} for a in effort.assumptions],
    }


def coverage_dict(cov: Coverage) -> dict:
    """report/schema/report.schema.json `coverage`, plus: clean-after-HIPIFY counts, each file's translator, where each
    unconverted name is, the names PyTorch's hipify treats the other way, and the API table used."""
    return {
        "total": {"converted_refs": cov.converted, "unconverted_refs": cov.unconverted, "percent": cov.percent,
                  "clean_refs": cov.clean, "clean_percent": cov.clean_percent},
        "files": [
            {"path": f.path, "converted_refs": f.converted, "unconverted_refs": f.unconverted,
             "percent": f.percent, "clean_refs": f.clean, "clean_percent": f.clean_percent,
             "translator": f.translator}
            for f in cov.files
        ],
        "unconverted": [{"name": name, "count": count, "locations": list(locations[:LOCATIONS_PER_NAME])}
                        for name, count, locations in cov.unconverted_names],
        "disagreements": [{"name": name, "hipify": "converted" if hipify else "unconverted",
                           "torch_hipify": "unconverted" if hipify else "converted", "count": count}
                          for name, hipify, count in cov.disagreements],
        "table": list(cov.table),
        # the ROCm library each converted reference needs (HIPIFY's default target, or -roc's: rocBLAS, MIOpen)
        "targets": [{"library": library, "converted_refs": count} for library, count in cov.targets],
    }


def render_json(report: Report) -> str:
    return json.dumps(report_dict(report), indent=2, ensure_ascii=False) + "\n"
