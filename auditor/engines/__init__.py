"""Engines turn parse results into findings: one engine per input kind, never one class per rule."""
from __future__ import annotations

from dataclasses import replace

from auditor.types import Finding, Rule, Severity, Span

SNIPPET_LIMIT = 160


def snippet_of(lines: list[str], line: int | None) -> str:
    if line is None or not 1 <= line <= len(lines):
        return ""
    text = " ".join(lines[line - 1].split())
    return text if len(text) <= SNIPPET_LIMIT else text[: SNIPPET_LIMIT - 1] + "…"


def make_finding(
    rule: Rule,
    path: str,
    span: Span,
    subject: str,
    snippet: str,
    *,
    guarded: bool = False,
    optional: bool = False,
    detail: str = "",
) -> Finding:
    finding = Finding(
        rule_id=rule.id,
        path=path,
        span=span,
        subject=subject,
        snippet=snippet,
        message=rule.message,
        severity=rule.severity,
        optional=optional,
        detail=detail,
    )
    return as_guarded(finding) if guarded else finding


def as_guarded(finding: Finding) -> Finding:
    """On a path a ROCm build never takes (docs/concepts.md, Guarded code): reported, capped at info."""
    return replace(finding, guarded=True, severity=Severity.INFO)
