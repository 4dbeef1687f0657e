"""Requirement files the package's own install never reads. When `setup.py` or `pyproject.toml` reads some
requirement files by name (vLLM's `get_requirements()` reads `common.txt` and `cuda.txt`), the others beside
them (`kv_connectors.txt`, `rubin-prerelease.txt`) are optional install sets, like extras."""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from auditor.model.rocmpath.rocmmanifests import PYPROJECTS, rocm_extras
from auditor.util.purepaths import pure

REQUIREMENT_FILE = re.compile(r"(?i)^(?:.*requirements.*|constraints.*)\.(?:txt|in)$")
NAMED = re.compile(r"""[\w.\-/]+\.(?:txt|in)\b""")
INCLUDE = re.compile(r"^\s*(?:-r|--requirement|-c|--constraint)[=\s]+(\S+)", re.MULTILINE)
PACKAGING = ("setup.py", "pyproject.toml", "setup.cfg")
# `pyproject-gpu.toml`, `pyproject_cuda12.toml`: pip reads `pyproject.toml` only
ALTERNATIVE_PYPROJECT = re.compile(r"(?i)^pyproject[-_.][\w.-]+\.toml$")
CONDA_RECIPES = frozenset({"meta.yaml", "meta.yml", "recipe.yaml"})


def is_requirement_file(path: str) -> bool:
    p = pure(path)
    return p.suffix in (".txt", ".in") and (bool(REQUIREMENT_FILE.match(p.name))
                                            or any(part.lower() == "requirements" for part in p.parts[:-1]))


def unread_requirement_files(paths: Sequence[str], text_of: Callable[[str], str]) -> frozenset[str]:
    """Requirement files of one component that its packaging does not read, directly or through `-r`;
    empty when the packaging reads none (then `requirements.txt` is how the project installs)."""
    packaging = [p for p in paths if pure(p).name in PACKAGING]
    requirement_files = [p for p in paths if is_requirement_file(p)]
    if not packaging or not requirement_files:
        return frozenset()
    named = {pure(m).name for p in packaging for m in NAMED.findall(text_of(p))}
    read = {p for p in requirement_files if pure(p).name in named}
    if not read:
        return frozenset()
    frontier = list(read)
    while frontier:
        current = frontier.pop()
        for target in INCLUDE.findall(text_of(current)):
            resolved = (pure(current).parent / target).as_posix()
            for candidate in requirement_files:
                if candidate not in read and (candidate == resolved or candidate.endswith("/" + target)):
                    read.add(candidate)
                    frontier.append(candidate)
    return frozenset(p for p in requirement_files if p not in read)


def install_variants(comp: str, paths: Sequence[str], text_of: Callable[[str], str]) -> frozenset[str]:
    """The manifests a ROCm user's install of the component does not read, beside the packaging it does read (a
    setup.py or pyproject.toml at its root). An alternative `pyproject_<variant>.toml` is a release variant pip
    never reads (faiss's `pyproject-gpu.toml`, which its release job puts in place of `pyproject.toml`), as is a
    conda recipe (another channel's release build): unless the variant is the ROCm install (its extras are the
    ROCm ones, `*_hip`/`rocm*`: a JAX-style `pyproject_hip.toml`), when it is the manifest a ROCm user installs
    from and the default `pyproject.toml` (the CUDA install, unless it declares a ROCm extra itself) is the
    variant the ROCm install does not read. A component with no pip packaging of its own (a conda feedstock)
    keeps its recipe."""
    root = "" if comp == "." else comp.rstrip("/") + "/"
    if not any(p == root + name for p in paths for name in PACKAGING):
        return frozenset()
    variants = {p for p in paths if ALTERNATIVE_PYPROJECT.match(pure(p).name)
                or pure(p).name in CONDA_RECIPES}
    default = root + "pyproject.toml"
    rocm = sorted(p for p in variants if pure(p).parent == pure(default).parent
                  and PYPROJECTS.match(pure(p).name) and rocm_extras(p, text_of(p)))
    if not rocm or default not in paths or rocm_extras(default, text_of(default)):
        return frozenset(variants)
    return frozenset((variants - {rocm[0]}) | {default})


def not_installed(comp: str, paths: Sequence[str], text_of: Callable[[str], str]) -> frozenset[str]:
    """The component's requirement sets and manifests its own install never reads."""
    return unread_requirement_files(paths, text_of) | install_variants(comp, paths, text_of)
