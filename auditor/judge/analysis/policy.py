"""Path policy from the config: per-file-ignores (rules that do not apply to some files) and optional-dirs
(directories whose findings never block). Applied to scan results after the scan, so cached results stay
valid whatever the policy."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pathspec

from auditor.match.rulebook import Rulebook, id_matches
from auditor.match.rulebook.context import ScanContext
from auditor.types import FileResult


def unknown_selectors(rulebook: Rulebook, per_file_ignores: Sequence[tuple[str, tuple[str, ...]]]) -> list[str]:
    """Rule ids, prefixes or names in per-file-ignores that match no rule (a typo turns nothing off)."""
    return [s for _, selectors in per_file_ignores for s in selectors
            if not any(id_matches(rule, s) for rule in rulebook.rules)]


def apply_path_policy(
    results: Sequence[FileResult],
    rulebook: Rulebook | ScanContext,
    per_file_ignores: Sequence[tuple[str, tuple[str, ...]]] = (),
    optional_dirs: Sequence[str] = (),
) -> list[FileResult]:
    if not per_file_ignores and not optional_dirs:
        return list(results)
    ignores = [(pathspec.GitIgnoreSpec.from_lines([glob]), selectors) for glob, selectors in per_file_ignores]
    optional = pathspec.GitIgnoreSpec.from_lines([_as_directory(d) for d in optional_dirs])
    rules = rulebook.by_id()
    out = []
    for result in results:
        ignored = {s for spec, selectors in ignores if spec.match_file(result.path) for s in selectors}
        kept = [f for f in result.findings
                if not (f.rule_id in rules and any(id_matches(rules[f.rule_id], s) for s in ignored))]
        if optional_dirs and optional.match_file(result.path):
            kept = [replace(f, optional=True) for f in kept]
        dropped = len(result.findings) - len(kept)
        out.append(replace(result, findings=tuple(kept), suppressed=result.suppressed + dropped))
    return out


def _as_directory(pattern: str) -> str:
    """`contrib` and `contrib/` both name a directory: what lies under it, not a file of that name."""
    return pattern if pattern.endswith("/") else pattern + "/"
