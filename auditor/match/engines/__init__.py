"""Engines turn parse results into findings: one engine per input kind, never one class per rule."""
from __future__ import annotations

import re
from dataclasses import replace

from auditor.types import Finding, Rule, Severity, Span

SNIPPET_LIMIT = 160
NAMED_SUBJECT = re.compile(r"[\w.:+/<>#@=!()-]{1,60}")   # a subject that can head its message: a name, not a line


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
        message=site_message(rule.message, subject),
        severity=rule.severity,
        optional=optional,
        detail=detail,
    )
    return as_guarded(finding) if guarded else finding


def site_message(general: str, subject: str) -> str:
    """A finding's message names what matched (the macro, package, API or flag), then the rule's general text."""
    named = " ".join(subject.split())
    if not is_a_name(named) or named in general:
        return general
    return f"`{named}`: {general}"


def is_a_name(subject: str) -> bool:
    """A subject short enough to head a message: a macro, package, API or flag, not a line or a fragment."""
    return bool(NAMED_SUBJECT.fullmatch(subject)) and subject.count("(") == subject.count(")")


def as_guarded(finding: Finding) -> Finding:
    """On a path a ROCm build never takes (docs/concepts.md, Guarded code): reported, capped at info."""
    return replace(finding, guarded=True, severity=Severity.INFO)
