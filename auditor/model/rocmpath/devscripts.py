"""Shell scripts the install never runs. Where a component is installed by pip (a setup.py or a pyproject.toml of
a distribution), pip's build backend runs setup.py, the pyproject's backend and what they call (CMake through
scikit-build, say); a shell script beside them (`setup.sh` making a developer's virtualenv, `build_dev.sh`) is
run by a developer by hand. It is such a script unless one of those build files names it."""
from __future__ import annotations

from collections.abc import Callable, Sequence

from auditor.model.rocmpath.provenance import within
from auditor.types import SourceFile
from auditor.util.purepaths import pure

PIP_BUILDS = frozenset({"setup.py", "pyproject.toml"})
SHELL_KIND = "shell"


def _runs_builds(path: str) -> bool:
    """A file pip's build may run: the Python build scripts and the CMake files scikit-build runs."""
    name = pure(path).name
    return name in PIP_BUILDS or name == "CMakeLists.txt" or name.endswith(".cmake")


def unrun_scripts(manifests: Sequence[str], mine: Sequence[SourceFile], packages: frozenset[str],
                  text_of: Callable[[str], str]) -> frozenset[str]:
    """The component's shell scripts outside its shipped packages that no build file pip runs names, when pip
    installs the component (`manifests`: its setup.py or distribution pyproject.toml, empty when it has none)."""
    if not any(pure(m).name in PIP_BUILDS for m in manifests):
        return frozenset()
    scripts = [f.path for f in mine if f.kind == SHELL_KIND and not any(within(f.path, p) for p in packages)]
    if not scripts:
        return frozenset()
    builds = [text_of(f.path) for f in mine if _runs_builds(f.path)]
    return frozenset(s for s in scripts if not any(pure(s).name in text for text in builds))
