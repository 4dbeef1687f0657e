"""Facts about what a ROCm user's install runs, read after each component's build: what importing it builds
(JIT loads), the extensions its imports need a second setup script to build, the shell scripts pip never runs,
the entry points' modules, the C/C++ files only a nested distribution includes, and the GPU sources the install
compiles (docs/reach-model.md, "What the install builds and runs")."""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from auditor.model.rocmpath.devscripts import unrun_scripts
from auditor.model.rocmpath.entrypoints import entry_modules
from auditor.model.rocmpath.includedby import included_only_by_parts
from auditor.model.rocmpath.jitloads import jit_built
from auditor.model.rocmpath.model import ProjectBuild
from auditor.model.rocmpath.pybuild import PyBuild
from auditor.model.rocmpath.rocmevidence import GPU_SUFFIXES, with_built_gpu_sources
from auditor.model.rocmpath.sidebuilds import required_distributions, required_side_builds
from auditor.types import SourceFile


def note_install_runs(project: ProjectBuild, comp: str, mine: Sequence[SourceFile], manifests: Sequence[str],
                      text_of: Callable[[str], str], pybuilds: Sequence[PyBuild]) -> None:
    """What importing the component builds (JIT loads), the extensions its imports need a second setup script to
    build, and the shell scripts pip's build never runs."""
    shipped = project.shipped_python[comp]
    project.jit_built.update(jit_built(mine, shipped, text_of))
    project.required_builds.update(required_side_builds(comp, mine, shipped, text_of, pybuilds))
    project.unrun_scripts = project.unrun_scripts | unrun_scripts(manifests, mine, shipped, text_of)


def note_what_the_install_skips(project: ProjectBuild, manifests: Mapping[str, Sequence[str]],
                                owner: Callable[[str], str], owned: Mapping[str, Sequence[SourceFile]],
                                own_files: Sequence[SourceFile], text_of: Callable[[str], str]) -> None:
    """The entry points' modules, the nested distributions the package cannot run without, the C/C++ files only a
    nested distribution includes, and each component's GPU sources once the sources the install skips are known."""
    manifest_paths = [m for found in manifests.values() for m in found]
    project.entry_modules = entry_modules([text_of(m) for m in manifest_paths if m.endswith("setup.py")],
                                          [text_of(m) for m in manifest_paths if m.endswith("pyproject.toml")])
    project.required_parts = required_distributions(project, owned, text_of)
    project.included_by_parts = included_only_by_parts(own_files, text_of, owner,
                                                       project.components, project.provenance)
    for comp in owned:
        project.paths[comp] = with_built_gpu_sources(project.paths[comp], [
            f.path for f in owned[comp] if f.path.endswith(GPU_SUFFIXES)], project.skipped_by_default)
