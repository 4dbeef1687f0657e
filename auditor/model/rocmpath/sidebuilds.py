"""Extensions the default ROCm install does not build though the package needs them: those only a second setup
script builds (`setup_cuda.py` beside the package), which pip's install never runs, and those the setup script
builds only in its CUDA configuration (`if 'cu' in torch.__version__ and CUDA_HOME is not None:`). When a shipped
module imports one without a fallback, the package cannot run without it, so its sources are required: a ROCm
user builds them (hipified by ROCm PyTorch) as a CUDA user does, and what they hold is work, not a file no build
lists or another vendor's build."""
from __future__ import annotations

import ast
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import PurePosixPath

from auditor.parse.pyimports import unguarded_imports
from auditor.model.rocmpath.model import ProjectBuild
from auditor.model.rocmpath.provenance import artifact_files, parent_dir, within
from auditor.model.rocmpath.pybuild import PyBuild, read_python_build_text
from auditor.types import SourceFile

SIDE_SETUP = re.compile(r"^setup[_-]\w+\.py$")
MAX_CHARS = 1_000_000
SIDE_BUILT = ("only {build} builds `{name}`, which pip's install never runs, and {importer} imports it without a "
              "fallback: the package needs it built")
CUDA_BUILT = ("{build} builds `{name}` only in its CUDA configuration, and {importer} imports it without a "
              "fallback: the ROCm build must build it too")


def required_side_builds(comp: str, mine: Sequence[SourceFile], packages: frozenset[str],
                         text_of: Callable[[str], str], pybuilds: Sequence[PyBuild]) -> dict[str, str]:
    """source -> why it is required, for each extension a second setup script builds, or the setup script only
    in its CUDA configuration, and a shipped module imports unconditionally. `pybuilds`: the component's build
    scripts as its build reader read them."""
    builds = [b for f in mine if f.kind == "python" and SIDE_SETUP.match(PurePosixPath(f.path).name)
              and "setup(" in (text := text_of(f.path)) and len(text) <= MAX_CHARS
              and (b := read_python_build_text(f.path, text)) is not None and b.artifacts]
    wanted = {name.rsplit(".", 1)[-1]: (b, name, SIDE_BUILT) for b in builds for name in b.artifacts}
    for b in pybuilds:
        cuda_only = [name for name, configs in b.artifacts.items() if configs and not configs & {"rocm", "both"}]
        if PurePosixPath(b.path).name == "setup.py" and cuda_only:
            builds.append(b)
            wanted.update({name.rsplit(".", 1)[-1]: (b, name, CUDA_BUILT) for name in cuda_only})
    if not wanted:
        return {}
    # the shipped packages; with none found (a namespace package), the modules beside the second setup script
    homes = packages or frozenset(parent_dir(b.path) for b in builds)
    found: dict[str, str] = {}
    importers = importers_without_fallback(mine, homes, set(wanted), text_of, {b.path for b in builds})
    for short, importer in importers.items():
        build, name, how = wanted[short]
        why = how.format(build=build.path, name=name, importer=importer)
        for path in artifact_files(comp, build, name, mine):
            found.setdefault(path, why)
    return found


def importers_without_fallback(files: Sequence[SourceFile], homes: frozenset[str], wanted: set[str],
                               text_of: Callable[[str], str], skip: frozenset[str] | set[str] = frozenset()
                               ) -> dict[str, str]:
    """module name -> the first Python file under `homes` that imports it without a fallback."""
    found: dict[str, str] = {}
    for f in files:
        if f.kind != "python" or not any(within(f.path, p) for p in homes) or f.path in skip:
            continue
        text = text_of(f.path)
        if not any(short in text for short in wanted) or len(text) > MAX_CHARS:
            continue
        try:
            loaded = {name.rsplit(".", 1)[-1] for name in unguarded_imports(ast.parse(text))}
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for short in sorted(loaded & wanted):
            found.setdefault(short, f.path)
    return found


def required_distributions(project: ProjectBuild, owned: Mapping[str, Sequence[SourceFile]],
                           text_of: Callable[[str], str]) -> dict[str, str]:
    """nested distribution -> why the shipped package needs it: a module of a primary component imports, without a
    fallback, an extension only that nested distribution builds (`from ext_cuda import op` at the top of a module,
    with `csrc/ext/setup.py` building `ext_cuda`). Installing the package without it fails, so a port builds it."""
    built = {name.rsplit(".", 1)[-1]: comp for comp, kind in project.components.items() if kind == "secondary"
             and (path := project.paths.get(comp)) is not None
             for name in (*path.rocm_artifacts, *path.cuda_artifacts)}
    needed: dict[str, str] = {}
    for comp, kind in project.components.items():
        packages = project.shipped_python.get(comp, frozenset())
        if kind != "primary" or not built or not packages:
            continue
        for short, importer in importers_without_fallback(owned.get(comp, ()), packages, set(built),
                                                          text_of).items():
            needed.setdefault(built[short], f"{importer} imports `{short}` without a fallback, and only "
                                            f"{built[short]}/ builds it: the package needs it installed")
    return needed
