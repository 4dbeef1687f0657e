"""Report -> SARIF 2.1.0 for GitHub code scanning: repo-relative URIs, rule metadata with help text, our
fingerprint under partialFingerprints. auditor/report/schema/sarif-github.schema.json holds what GitHub requires."""
from __future__ import annotations

import json

from auditor import __version__
from auditor.util.escape import uri_path
from auditor.judge.incomplete import closed_failures
from auditor.report.text import sentence   # one full stop: a ROCm alternative may end in one already
from auditor.types import VERIFY, Finding, Report, Rule, Severity

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
FINGERPRINT_KEY = "rocmAudit/v1"
INFORMATION_URI = "https://pypi.org/project/rocm-audit/"
LEVEL = {Severity.CRITICAL: "error", Severity.HIGH: "error", Severity.MEDIUM: "warning", Severity.LOW: "note",
         Severity.INFO: "note"}
# GitHub code scanning accepts at most this many results per run and drops an upload with more.
MAX_RESULTS = 25_000
# GitHub sorts alerts by this (0-10); it is not a security score.
RANK = {Severity.CRITICAL: 95.0, Severity.HIGH: 75.0, Severity.MEDIUM: 50.0, Severity.LOW: 20.0, Severity.INFO: 5.0}


def repo_uri(report: Report, path: str) -> str:
    """A finding's path relative to the repository root, as GitHub matches it to the checked-out tree."""
    return f"{report.repo_prefix}/{path}" if report.repo_prefix else path


def _rule(rule: Rule) -> dict:
    help_text = rule.docs or rule.message
    if rule.rocm_alternative:
        help_text = f"{help_text}\n\nROCm alternative: {rule.rocm_alternative}"
    markdown = f"**{rule.message}**\n\n" + "\n\n".join(" ".join(p.split()) for p in (rule.docs or "").split("\n\n"))
    if rule.rocm_alternative:
        markdown += f"\n\n**ROCm alternative:** {rule.rocm_alternative}"
    return {
        "id": rule.id,
        "name": "".join(part.capitalize() for part in rule.name.split("-")),
        "shortDescription": {"text": rule.message},
        "fullDescription": {"text": rule.message + (f" ROCm alternative: {sentence(rule.rocm_alternative)}"
                                                    if rule.rocm_alternative else "")},
        "help": {"text": help_text, "markdown": markdown.strip()},
        "defaultConfiguration": {"level": LEVEL[rule.severity], "rank": RANK[rule.severity]},
        "properties": {
            "tags": ["rocm", "portability", rule.category],
            "precision": "high",
            "problem.severity": "recommendation" if rule.severity <= Severity.LOW else LEVEL[rule.severity],
            "category": rule.category,
            "effort": rule.effort,
        },
    }


def _result(report: Report, index: int, rule_index: dict[str, int]) -> dict:
    f: Finding = report.findings[index]
    rule = report.rules.get(f.rule_id)
    message = f"{f.message} ({f.detail})" if f.detail else f.message
    if not report.breaks(f):
        note = f" ({f.disposition_note})" if f.disposition_note else ""
        message += f" Not breaking on ROCm: {f.disposition}{note}."
    if rule and rule.rocm_alternative:
        message += f" ROCm alternative: {sentence(rule.rocm_alternative)}"
    region: dict[str, object] = {"startLine": f.span.line or 1}
    if f.span.column:
        region["startColumn"] = f.span.column
    if f.span.end_line and f.span.line and f.span.end_line >= f.span.line:
        region["endLine"] = f.span.end_line
    if f.snippet:
        region["snippet"] = {"text": f.snippet}
    result = {
        "ruleId": f.rule_id,
        "ruleIndex": rule_index[f.rule_id],
        "level": _level(report, f),
        "message": {"text": message},
        "locations": [{"physicalLocation": {
            "artifactLocation": {"uri": uri_path(repo_uri(report, f.path)), "uriBaseId": "%SRCROOT%"},
            "region": region,
        }}],
        "partialFingerprints": {FINGERPRINT_KEY: f.fingerprint},
        "properties": {"severity": f.severity.label, "subject": f.subject, "guarded": f.guarded,
                       "disposition": f.disposition, "breaksOnRocm": report.breaks(f)},
    }
    if f.guarded:   # a ROCm path already exists: reported, but not a problem to act on
        result["suppressions"] = [{"kind": "inSource", "justification": "guarded: a ROCm code path already exists"}]
    new = f.new
    if new is not None:
        result["baselineState"] = "new" if new else "unchanged"
    return result


def _level(report: Report, f: Finding) -> str:
    """Only what would break is an error (or a warning, by its severity); what to verify on hardware is a warning;
    every other finding (listed with --sarif-all) a note."""
    if report.breaks(f):
        return LEVEL[f.severity]
    return "warning" if f.disposition == VERIFY else "note"


def listed(report: Report, f: Finding, everything: bool = False) -> bool:
    """Whether SARIF lists a finding as a result: what would break and what to verify on hardware, or every
    finding with `everything` (--sarif-all). Code scanning shows each result as an alert, so notes that the tool
    itself says do not break stay out by default."""
    return f.rule_id in report.rules and (everything or report.breaks(f) or f.disposition == VERIFY)


def _kept(report: Report, limit: int, everything: bool = False) -> list[int]:
    """Indices of the findings listed as results: all that `listed` keeps, or the `limit` most severe (breaking
    first), in the findings' order."""
    indices = [i for i, f in enumerate(report.findings) if listed(report, f, everything)]
    if len(indices) <= limit:
        return indices
    by_weight = sorted(indices, key=lambda i: (not report.breaks(report.findings[i]),
                                               -int(report.findings[i].severity), i))
    return sorted(by_weight[:limit])


def sarif_dict(report: Report, limit: int = MAX_RESULTS, everything: bool = False) -> dict:
    kept = _kept(report, limit, everything)
    used = sorted({report.findings[i].rule_id for i in kept})
    rules = [_rule(report.rules[rule_id]) for rule_id in used if rule_id in report.rules]
    rule_index = {r["id"]: i for i, r in enumerate(rules)}
    notifications = [
        {"level": "warning", "message": {"text": message},
         "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri_path(repo_uri(report, path)),
                                                                  "uriBaseId": "%SRCROOT%"},
                                             "region": {"startLine": line}}}]}
        for path, line, message in report.warnings
    ] + [
        {"level": "error", "message": {"text": f"{path}: {message}"}} for path, message in report.errors
    ] + [
        {"level": "error", "message": {"text": sentence}} for _path, sentence in closed_failures(report)
    ]
    total = sum(1 for f in report.findings if listed(report, f, everything))
    left_out = sum(1 for f in report.findings if f.rule_id in report.rules) - total
    if left_out:
        notifications.insert(0, {"level": "note", "message": {"text": (
            f"{left_out:,} findings that do not break on ROCm (a ROCm alternative, optional, guarded, not built) "
            "are not listed; --sarif-all lists them as notes.")}})
    if len(kept) < total:
        notifications.insert(0, {"level": "warning", "message": {"text": (
            f"{total:,} findings; this file lists the {len(kept):,} most severe, as GitHub code scanning accepts "
            f"at most {MAX_RESULTS:,} results per run. The JSON report (--format json) counts and groups them all.")}})
    run = {
        "tool": {"driver": {"name": "rocm-audit", "version": __version__, "semanticVersion": __version__,
                            "informationUri": INFORMATION_URI, "rules": rules}},
        "automationDetails": {"id": "rocm-audit/"},
        "results": [_result(report, i, rule_index) for i in kept],
        "invocations": [{"executionSuccessful": True, "toolExecutionNotifications": notifications}],
        "properties": {"verdict": report.verdict, "verdictReason": report.verdict_reason,
                       "suppressed": report.suppressed, "resultsTotal": total, "resultsListed": len(kept),
                       "resultsTruncated": len(kept) < total, "notBreakingLeftOut": left_out},
    }
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def render_sarif(report: Report, everything: bool = False) -> str:
    return json.dumps(sarif_dict(report, everything=everything), indent=2, ensure_ascii=False) + "\n"
