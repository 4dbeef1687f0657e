"""The judge as a table: each row maps a rule class and facts of a line's reach to a disposition. The first row
that matches decides; a row's note, or else the note of the fact that matched, says why.

A row matches when one of its terms does; a term is names joined by `&` (all present), each a fact of the line's
reach (auditor/model/facts.FACTS) or a class of the finding's rule (auditor/judge/classes.CLASSES), `not NAME`
when it must be absent. A row with no terms matches every finding (the last one)."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from auditor.judge.classes import CLASSES
from auditor.judge.dispositions import (
    ALTERNATIVE, CUDA_BRANCH, EFFECTS, GUARDED, LIVE, NOT_BUILT, OPS, OPTIONAL, OPTIONAL_FEATURE, OTHER_VENDOR,
    PROJECT_MACRO, SHIM, TOOLING, VERIFY, Effect,
)
from auditor.model.facts import FACTS
from auditor.model.reach import Step


@dataclass(frozen=True, slots=True)
class Term:
    present: tuple[str, ...]
    absent: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str) -> "Term":
        names = [n.strip() for n in text.split("&")]
        present = tuple(n for n in names if not n.startswith("not "))
        absent = tuple(n.removeprefix("not ").strip() for n in names if n.startswith("not "))
        unknown = [n for n in present + absent if n not in FACTS and n not in CLASSES]
        if unknown:
            raise ValueError(f"judge table: {text!r} names no fact or rule class: {unknown}")
        return cls(present, absent)

    def matches(self, names: frozenset[str]) -> bool:
        return all(n in names for n in self.present) and not any(n in names for n in self.absent)

    def __str__(self) -> str:
        return " & ".join((*self.present, *(f"not {n}" for n in self.absent)))


@dataclass(frozen=True, slots=True)
class Row:
    name: str
    disposition: str
    terms: tuple[Term, ...]
    note: str = ""        # "": the note of the first fact of the matching term that has one

    @property
    def effect(self) -> Effect:
        return EFFECTS[self.disposition]

    def match(self, names: frozenset[str]) -> Term | None:
        if not self.terms:
            return Term(())
        return next((t for t in self.terms if t.matches(names)), None)


STALE_NOTE = "a HIP build path written for what ROCm 6 removed: not proof that a current ROCm builds the project"


def _row(name: str, disposition: str, *terms: str, note: str = "") -> Row:
    return Row(name, disposition, tuple(Term.parse(t) for t in terms), note)


TABLE: tuple[Row, ...] = (
    _row("guarded by a project macro", PROJECT_MACRO, "project-macro"),
    _row("guarded", GUARDED, "guard"),
    _row("ops", OPS, "ops-path", "container-rule", "unrun-script", note="CI, container or developer script"),
    _row("another vendor's backend", OTHER_VENDOR, "vendor-backend"),
    _row("optional part or integration", OPTIONAL, "separate-distribution", "optional-import", "optional-dir",
         "optional-part", "never-imported & optional-package", "unrequired-integration", "unread-requirements"),
    _row("CUDA branch of a build script", CUDA_BRANCH, "cuda-build-branch"),
    _row("repo tooling", TOOLING, "not-packaged"),
    _row("stale HIP path", LIVE, "stale-hip", note=STALE_NOTE),
    _row("renamed by HIPIFY", GUARDED, "hipify-renamed & hipified-component & not hipify-kept",
         "hipify-renamed & jit-built & not hipify-kept", "hipify-renamed & required-build & not hipify-kept",
         "hipify-renamed & required-part & not hipify-kept"),
    _row("mapped by a shim", SHIM, "shim-header", "redefined-name"),
    _row("written for ROCm", GUARDED, "written-for-rocm"),
    _row("optional feature", OPTIONAL_FEATURE, "fenced", "tolerated-artifact", "optional-build", "not-called",
         "opt-in-line", "gpu-build & no-gpu-build", "opt-in-op & not soft"),
    _row("CUDA-only artifact", LIVE, "no-rocm-counterpart"),
    _row("ROCm builds an alternative", ALTERNATIVE, "rocm-alternative"),
    _row("another vendor's source", OTHER_VENDOR, "other-backend-source"),
    _row("verify: an op compiled on first use", VERIFY, "opt-in-op & soft",
         note="in an op the ROCm path compiles on first use"),
    _row("not built", NOT_BUILT, "unreferenced"),
    _row("CUDA-only build switch", LIVE, "build-switch & cuda-only-switch & rocm-path-verified"),
    _row("build switch the ROCm build keeps", GUARDED, "build-switch & rocm-path-verified",
         note="the ROCm build compiles this, and its build files do not keep the switch CUDA-only"),
    _row("verify: a CUDA build setting", VERIFY, "build-setting & rocm-build-file",
         note="a CUDA build setting of a build that also has a ROCm configuration"),
    _row("verify: code the ROCm build compiles or runs", VERIFY, "soft & rocm-built", "soft & rocm-runs",
         note="in code the ROCm build already compiles or runs"),
    _row("broken ROCm path", LIVE, "hard & rocm-built", note="the ROCm build compiles this file: a broken path"),
    _row("live", LIVE),
)


def judge(names: frozenset[str], steps: Mapping[str, Step]) -> tuple[Row, str]:
    """The first row matching `names` (the finding's reach facts and rule classes), and its note."""
    row, term = _first_match(names)
    if row.note:
        return row, row.note
    return row, next((steps[n].note for n in term.present if n in steps and steps[n].note), "")


@lru_cache(maxsize=4096)
def _first_match(names: frozenset[str]) -> tuple[Row, Term]:
    """The first row matching `names` and its term: a run's findings share a few hundred sets of facts."""
    for row in TABLE:
        term = row.match(names)
        if term is not None:
            return row, term
    raise AssertionError("the judge table ends with a row that matches every finding")


def markdown() -> str:
    """The table as docs/reach-model.md shows it (a test keeps the page equal to this)."""
    lines = ["| # | row | when (any of) | disposition | verdict |", "|---|---|---|---|---|"]
    for number, row in enumerate(TABLE, 1):
        when = "<br>".join(f"`{term}`" for term in row.terms) or "anything else"
        lines.append(f"| {number} | {row.name} | {when} | `{row.disposition}` | {row.effect} |")
    return "\n".join(lines)
