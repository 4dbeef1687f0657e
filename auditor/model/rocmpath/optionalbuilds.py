"""Extensions the default ROCm install goes on without: a build a setup.py tolerates failing
(auditor/model/rocmpath/pytolerant.py) or one only on a branch a ROCm install skips (`if "CUDA_HOME" in os.environ:`),
whose every import in the shipped packages falls back (auditor/model/rocmpath/tolerated.py); and an extension only the
CUDA configuration builds from an optional directory's sources (an example's op). Their sources are optional."""
from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import PurePosixPath

from auditor.model.rocmpath.model import ProjectBuild
from auditor.model.rocmpath.includedby import included_only_from, includers
from auditor.model.rocmpath.provenance import C_KINDS, artifact_files
from auditor.model.rocmpath.pybuild import PyBuild
from auditor.model.rocmpath.pytolerant import tolerated_builds
from auditor.model.rocmpath.tolerated import tolerated_artifacts
from auditor.types import SourceFile
from auditor.util.textmemo import by_text


def optional_builds(project: ProjectBuild, comp: str, mine: Sequence[SourceFile], pybuilds: Sequence[PyBuild],
                    tree_of: Callable[[str], ast.Module | None], text_of: Callable[[str], str],
                    optional_dirs: frozenset[str]) -> frozenset[str]:
    """Notes each optional extension's sources in `project.optional_builds`; returns the extensions' names."""
    optional: set[str] = set()
    for build in pybuilds:
        path = build.path
        tolerated = by_text("tolerated builds", text_of(path), partial(_tolerated, tree_of, path))
        builds = {name: f"the install tolerates `{name}` failing to build ({path}:{line})"
                  for name, line in tolerated.items()}
        skipped = {name: f"the default ROCm install does not build `{name}` "
                         f"({build.path}:{build.artifact_lines.get((name, 'cuda'), 0)}: a branch false on ROCm)"
                   for name, configs in build.artifacts.items() if configs == {"cuda"}}
        for name, why in skipped.items():
            builds.setdefault(name, why)
        found = {a: f"{builds[a]}, and its import falls back ({where})" for a, where in tolerated_artifacts(
            builds, project.shipped_python.get(comp, frozenset()), mine, text_of).items()}
        for name, why in skipped.items():
            line = build.artifact_lines.get((name, "cuda"), 0)
            if line in build.opt_in_lines:   # off in every vendor's default install: the package goes on without it
                found[name] = f"the default install builds `{name}` only when asked to ({build.path}:{line}: " \
                              f"a branch only an opt-in takes)"
                continue
            sources = artifact_files(comp, build, name, mine)
            if name not in found and sources and all(
                    {part.lower() for part in PurePosixPath(path).parts[:-1]} & optional_dirs for path in sources):
                found[name] = f"{why}, from sources in an optional directory"
        optional |= set(found)
        for artifact, note in found.items():
            for path in artifact_files(comp, build, artifact, mine):
                project.optional_builds.setdefault(path, note)
    _headers_of_optional_builds(project, mine, text_of)
    return frozenset(optional)


def _headers_of_optional_builds(project: ProjectBuild, mine: Sequence[SourceFile],
                                text_of: Callable[[str], str]) -> None:
    """A header only optional extensions' sources include is as optional as they are."""
    sources = {f.path: project.optional_builds[f.path] for f in mine if f.path in project.optional_builds}
    if not sources:
        return
    edges = includers([f for f in mine if f.kind in C_KINDS], text_of)
    for path, note in included_only_from(sources, edges).items():
        if project.provenance.get(path) not in ("both", "rocm"):
            project.optional_builds.setdefault(path, f"only optional builds' sources include it: {note}")


def _tolerated(tree_of: Callable[[str], ast.Module | None], path: str) -> dict[str, int]:
    tree = tree_of(path)
    return tolerated_builds(tree) if tree is not None else {}
