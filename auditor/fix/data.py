"""The fixes' data, `rules/fixes/*.toml`: one `[[fix]]` per rule id, with the action that applies it, whether it
is safe, and before/after examples that the tests run. The fixes live beside the rules, keyed by rule id, so that
the rule files (detection) and the fix files (rewriting) change independently."""
from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

from auditor.util.errors import ToolError

SAFETY = ("safe", "unsafe")
ACTIONS = {
    "full-mask": "cuda", "warp-lane-math": "cuda", "nanosleep": "cuda", "named-mask": "cuda",
    "torch-version-cuda": "python", "nvcc-flags": "python",
    "template": "text", "add-line": "text",
}


class FixDataError(ToolError, ValueError):
    """A fix file is malformed: the message names the file and the fix."""


@dataclass(frozen=True, slots=True)
class FixExample:
    file: str          # the file name the example is written as; its kind decides the fixer
    before: str
    after: str


@dataclass(frozen=True, slots=True)
class FixSpec:
    rule: str
    action: str                       # a key of ACTIONS
    safety: str                       # "safe": behaviour on CUDA unchanged; "unsafe": applied only with --unsafe
    summary: str                      # what the fix does, for the summary and the rule pages
    why: str                          # why it is safe, or what a reviewer has to check
    pattern: str | None = None        # template/add-line: a regex searched on the finding's line
    replacement: str | None = None    # template: its replacement (re.sub syntax, {placeholders}); add-line: the line
    removes_finding: bool = True      # False for additive fixes (the CUDA side stays, a ROCm side is added)
    only_where: str | None = None     # template/add-line: a regex the file must contain for the fix to be offered
    only_where_why: str = ""          # what the file lacks when it does not (the message of a fix not offered)
    never_in: tuple[str, ...] = ()    # file kinds the fix is never offered in (e.g. "ci": a job's NVIDIA image)
    never_in_why: str = ""
    beside: bool = False              # made in a ROCm variant of the file beside it (Dockerfile.rocm), never in it
    not_on: str | None = None         # template: a regex on the finding's line where the fix is not offered
    not_on_why: str = ""
    examples: tuple[FixExample, ...] = ()
    source_file: str = ""

    @property
    def engine(self) -> str:
        return ACTIONS[self.action]


_KEYS = {"rule", "action", "safety", "summary", "why", "pattern", "replacement", "removes_finding", "example",
         "only_where", "only_where_why", "never_in", "never_in_why", "beside", "not_on", "not_on_why"}


def _parse(raw: dict, where: str) -> FixSpec:
    unknown = set(raw) - _KEYS
    if unknown:
        raise FixDataError(f"{where}: unknown key(s) {sorted(unknown)}")
    for key in ("rule", "action", "safety", "summary", "why"):
        if not isinstance(raw.get(key), str) or not raw[key].strip():
            raise FixDataError(f"{where}: '{key}' is required (a string)")
    if raw["action"] not in ACTIONS:
        raise FixDataError(f"{where}: unknown action {raw['action']!r} (one of {', '.join(sorted(ACTIONS))})")
    if raw["safety"] not in SAFETY:
        raise FixDataError(f"{where}: safety must be 'safe' or 'unsafe'")
    if raw["action"] in ("template", "add-line"):
        if not raw.get("pattern") or raw.get("replacement") is None:
            raise FixDataError(f"{where}: a {raw['action']} fix needs 'pattern' and 'replacement'")
        for key in ("pattern", "only_where", "not_on"):
            try:
                re.compile(raw.get(key) or "")
            except re.error as err:
                raise FixDataError(f"{where}: bad {key}: {err}") from None
    for key in ("only_where", "not_on"):
        if raw.get(key) and not str(raw.get(f"{key}_why", "")).strip():
            raise FixDataError(f"{where}: '{key}' needs '{key}_why'")
    if raw.get("beside") and raw["action"] != "template":
        raise FixDataError(f"{where}: only a template fix can be made in a variant beside the file")
    examples = tuple(FixExample(e["file"], e["before"], e["after"]) for e in raw.get("example", ()))
    if not examples:
        raise FixDataError(f"{where}: every fix needs at least one [[fix.example]] with file, before and after")
    return FixSpec(raw["rule"], raw["action"], raw["safety"], " ".join(raw["summary"].split()),
                   " ".join(raw["why"].split()), raw.get("pattern"), raw.get("replacement"),
                   bool(raw.get("removes_finding", True)), raw.get("only_where"),
                   " ".join(str(raw.get("only_where_why", "")).split()), tuple(raw.get("never_in", ())),
                   " ".join(str(raw.get("never_in_why", "")).split()), bool(raw.get("beside", False)),
                   raw.get("not_on"), " ".join(str(raw.get("not_on_why", "")).split()), examples)


def load_fixes(root: Path) -> dict[str, FixSpec]:
    """rule id -> its fix, from `root/fixes/*.toml` (root: the rules directory)."""
    specs: dict[str, FixSpec] = {}
    for path in sorted((root / "fixes").glob("*.toml")):
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as err:
            raise FixDataError(f"fixes/{path.name}: {err}") from None
        for index, raw in enumerate(data.get("fix", ())):
            where = f"fixes/{path.name}: fix {raw.get('rule', index + 1)}"
            spec = _parse(raw, where)
            if spec.rule in specs:
                raise FixDataError(f"{where}: a second fix for {spec.rule}")
            specs[spec.rule] = replace(spec, source_file=path.name)
    return specs


@cache
def shipped_fixes() -> dict[str, FixSpec]:
    from auditor.match.rulebook import rules_root

    return load_fixes(rules_root())
