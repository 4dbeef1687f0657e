"""What `history` prepares once for all its points rather than once a point."""
from __future__ import annotations

from auditor.match.rulebook import Rulebook


def warm_scanner(rulebook: Rulebook) -> None:
    """Compile every tree-sitter query of the rules and load the HIPIFY API table in this process, once. Each
    point's scan forks its workers from this process, and a forked worker inherits what is compiled here
    instead of compiling it again (about half a second of every point that scans a C/C++ file). Compiling is
    keyed by each rule's id and query text, so the rulebook a point derives (its project's macros, its own
    package's rules left out) finds the same queries; which queries are compiled together changes no result."""
    from auditor.match.engines.cuda import query_groups

    query_rules = [rule for rule in rulebook.family("cuda") if getattr(rule.spec, "query", None) is not None]
    if query_rules:
        groups = query_groups(rulebook)
        groups.plan(query_rules)
        groups.compile_planned()
        _ = rulebook.table
