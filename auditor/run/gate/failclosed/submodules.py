"""Submodules a change adds (a gitlink new since the base): rocm-audit reads no submodule's code, so one the
project's own files include (`#include "sub/…"`, a header path through it) or import fails the run closed, and
any other is named in a note. Every gate mode (the change from run/gate/changeset.py)."""
from __future__ import annotations

import posixpath
from dataclasses import dataclass

from auditor.run.gate.changeset import Change
from auditor.types import Report
from auditor.util import vcs


@dataclass(frozen=True, slots=True)
class NewSubmodules:
    included: tuple[tuple[str, str], ...]   # (submodule, sentence): gate findings
    notes: tuple[str, ...]


def new_submodules(report: Report, change: Change | None) -> NewSubmodules:
    if change is None or change.top is None or change.base is None:
        return NewSubmodules((), ())
    try:
        recorded = vcs.submodule_paths(change.top) or []
        at_base = vcs.existing(change.top, change.base, recorded) if recorded else set()
    except vcs.GitError:
        return NewSubmodules((), ())
    # from the index: `git diff` does not show a gitlink whose directory is not checked out
    added = [change.local(p) for p in recorded if p not in at_base]
    included, notes = [], []
    for sub in sorted(p for p in added if p):
        user = _first_user(report, sub)
        if user is None:
            notes.append(f"{sub}: a submodule this change adds; its code is not scanned (scan it on its own)")
        else:
            included.append((sub, (f"a submodule this change adds, used by {user}: its code is not scanned, so "
                                   "nothing it brings can be judged; vendor its files or scan it on its own")))
    return NewSubmodules(tuple(included), tuple(notes))


def _first_user(report: Report, sub: str) -> str | None:
    """`file (#include "x")` or `file (import x)` of the first scanned file that reaches into `sub`."""
    name = posixpath.basename(sub)
    for result in report.results:
        here = posixpath.dirname(result.path)
        for include in result.facts.includes:
            resolved = posixpath.normpath(posixpath.join(here, include))
            if _under(resolved, sub) or _under(include, sub) or include.split("/", 1)[0] == name:
                return f'{result.path} (#include "{include}")'
        for module in result.facts.imports:
            dotted = module.replace(".", "/")
            if module.split(".", 1)[0] == name or _under(dotted, sub):
                return f"{result.path} (import {module})"
    return None


def _under(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory + "/")
