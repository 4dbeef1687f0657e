"""Read the build files of a tree (never run them) into a ProjectBuild: components, each one's ROCm path,
the configuration that compiles each source file, and the project macros for the preprocessor."""
from __future__ import annotations

import ast
import posixpath
from dataclasses import replace
import re
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache, partial
from pathlib import PurePosixPath

from auditor.match.inputs.kinds import BUILD_INPUTS
from auditor.truth.cpp import PreprocFacts
from auditor.truth.make import compiles_cuda
from auditor.truth.python import PythonPersona
from auditor.model.rocmpath.debugswitch import tested_switches, undefined_switches
from auditor.model.rocmpath.deps import hard_dependencies
from auditor.model.rocmpath.localreqs import compiled_by_setup, installed_by_path
from auditor.model.rocmpath.rocmevidence import rocm_path
from auditor.model.rocmpath.installfacts import note_install_runs, note_what_the_install_skips
from auditor.model.rocmpath.rocmmanifests import PYPROJECTS, rocm_extras
from auditor.model.rocmpath.cmakebuild import CBuild, read_cmake
from auditor.model.rocmpath.makebuild import read_makefile
from auditor.model.rocmpath.ownnames import extension_names, setup_names
from auditor.model.rocmpath.model import ProjectBuild
from auditor.model.rocmpath.pybuild import PyBuild, read_python_build_text
from auditor.model.rocmpath.provenance import (
    C_KINDS, parent_dir, within, behind_macros, packages, provenance,
)
from auditor.model.rocmpath.backends import vendor_backends
from auditor.model.rocmpath.declaredpackages import declared_packages
from auditor.model.rocmpath.redefine import rocm_redefinitions, undefined_in_shims
from auditor.model.rocmpath.reqsets import not_installed
from auditor.model.rocmpath.optionalbuilds import optional_builds
from auditor.model.rocmpath.tolerated import tolerated_artifacts
from auditor.match.engines.python.envoptin import opt_in_lines, opt_in_macros
from auditor.model.rocmpath.optinlibs import opt_in_tests
from auditor.model.rocmpath.wideshuffle import wide_shuffle_macros, wide_shuffle_uses
from auditor.types import SourceFile
from auditor.model.rocmpath.buildtexts import NESTED_TOO_DEEPLY, BuildTexts
from auditor.util.textmemo import by_text
from auditor.util.purepaths import pure
from auditor.util.tomltext import load_toml

SHIM_LINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(?:cu|CU)\w+[ \t]+(?:hip|HIP)\w+", re.MULTILINE)


def _shim_header(text: str) -> bool:
    """Five or more `#define cuX hipX` lines (a line that has one spells `hip` or `HIP`: most files are ruled
    out without the regular expression)."""
    return ("hip" in text or "HIP" in text) and len(SHIM_LINE.findall(text)) >= 5


def _python_build(path: str, text: str, parses: bool, unread: dict[str, str],
                  switches: PythonPersona | None = None) -> PyBuild | None:
    if not parses:
        return None
    try:
        return read_python_build_text(path, text, switches)   # a pure function of the text
    except RecursionError:   # the readers do not recurse on the tree's depth; kept as the last line of defence
        unread[path] = NESTED_TOO_DEEPLY
        return None


def _calls_setup(text: str, tree_of: Callable[[str], ast.Module | None], path: str) -> bool:
    tree = tree_of(path)
    if tree is None:
        return "setup(" in text
    return any(isinstance(n, ast.Call) and (getattr(n.func, "id", None) or getattr(n.func, "attr", None)) == "setup"
               for n in ast.walk(tree))


def _pyproject_is_distribution(text: str) -> tuple[bool, dict]:
    try:
        data = load_toml(text)
    except (tomllib.TOMLDecodeError, ValueError):
        return False, {}
    return ("project" in data or "build-system" in data), data




def owner(path: str, comps: Sequence[str]) -> str:
    """The deepest of `comps` holding `path` ("." when none does)."""
    return _owner(path, comps if isinstance(comps, tuple) else tuple(comps))


@lru_cache(maxsize=1 << 17)
def _owner(path: str, comps: tuple[str, ...]) -> str:
    best = "."
    for comp in comps:
        if comp != "." and within(path, comp) and len(comp) > len(best if best != "." else ""):
            best = comp
    return best




def read_project(
    files: Sequence[SourceFile], optional_dirs: frozenset[str] = frozenset(), pulled_in: Sequence[SourceFile] = (),
    facts: PreprocFacts | None = None, deadline: float | None = None, switches: PythonPersona | None = None,
) -> ProjectBuild:
    """`pulled_in`: build files of vendored code the tree's build includes (read for the ROCm path only);
    `facts`: the preprocessor under ROCm, so an include a ROCm build skips does not pull a header into it;
    `deadline`: a time.monotonic() after which no more files are read (each one left is noted in `unread`);
    `switches`: guards.toml's [python] names of the run's rulebook, which the Python engine reads too."""
    project = ProjectBuild()
    known = {f.path for f in files}
    own_files = list(files)
    files = own_files + [f for f in pulled_in if f.path not in known]
    texts = BuildTexts(project, {f.path: f for f in files}, deadline)
    text_of = texts.text_of
    manifests = _manifests(own_files, texts)
    root_setup = texts.tree_of("setup.py") if "setup.py" in manifests.comps.get(".", ()) else None
    order = _components(project, manifests.comps, own_files, optional_dirs, text_of, root_setup)
    owned: dict[str, list[SourceFile]] = {c: [] for c in order}
    for f in files:
        owned[owner(f.path, order)].append(f)
    rocm_macros: set[str] = set()
    cuda_macros: set[str] = set()
    optional_macros, shims = set[str](), set[str]()
    python_packages: list[tuple[frozenset[str], tuple[SourceFile, ...]]] = []
    hipified: set[str] = set()
    unread: set[str] = set()
    for comp in order:
        mine = owned[comp]
        pybuilds, cbuilds = _builds(project, mine, texts, switches)
        rocm_macros, cuda_macros = _and_build_macros(rocm_macros, cuda_macros, pybuilds, cbuilds)
        optional_macros |= {m for cb in cbuilds for m in cb.optional_macros}
        hip_build = any(b.builds_on_rocm for b in cbuilds) or any(b.builds_on_rocm for b in pybuilds)
        if any(b.hipify or b.uses_cuda_extension for b in pybuilds) and not any(b.builds_on_rocm for b in cbuilds):
            hipified.add(comp)
        comp_shims = {f.path for f in mine if f.kind in C_KINDS and _shim_header(text_of(f.path))}
        if hip_build:
            shims |= comp_shims
            if facts is not None and (redefined := _redefined_for_rocm(mine, facts, text_of, comp_shims, rocm_macros)):
                project.rocm_redefinitions[comp] = redefined
        project.paths[comp] = rocm_path(comp, mine, pybuilds, cbuilds, comp_shims if hip_build else set(),
                                        manifests.extras.get(comp, []), text_of)
        provenance(project, comp, mine, pybuilds, cbuilds, text_of, _with_build_macros(facts, rocm_macros, cuda_macros))
        _note_shipped_python(project, comp, mine, pybuilds, texts, optional_dirs, manifests.comps.get(comp, []))
        python_packages.append((project.shipped_python[comp], tuple(f for f in mine if f.kind == "python")))
        unread |= not_installed(comp, [f.path for f in mine if f.path in known], text_of)
    project.rocm_macros = frozenset(rocm_macros)
    project.cuda_macros = frozenset(cuda_macros - rocm_macros)
    _note_opt_ins_and_shuffles(project, files, text_of, facts, optional_macros - rocm_macros)
    project.shims = frozenset(shims)
    project.hipified = frozenset(hipified)
    project.undefined_on_rocm = undefined_in_shims(project.paths.values(), {p: text_of(p) for p in shims})
    project.python_packages = tuple(python_packages)
    project.unread_requirements = frozenset(unread)
    note_what_the_install_skips(project, manifests.comps, lambda p: owner(p, order), owned, own_files, text_of)
    project.vendor_backends = vendor_backends(own_files)
    project.own_packages = frozenset(pure(p).name for pkgs in project.shipped_python.values() for p in pkgs) \
        | frozenset(manifests.dist_names)
    project.dependencies = hard_dependencies(own_files, text_of)
    return project


@dataclass(frozen=True, slots=True)
class _Manifests:
    comps: dict[str, list[str]]                        # component directory -> its manifests
    extras: dict[str, list[tuple[str, int, str]]]      # directory -> (manifest, line, ROCm extra)
    dist_names: frozenset[str]                         # the names the project distributes and builds


def _manifests(own_files: Sequence[SourceFile], texts: BuildTexts) -> _Manifests:
    """Components from real manifests: a setup.py that calls setup(), a pyproject.toml of a distribution, a
    CMakeLists.txt with project(), a Makefile compiling CUDA; and the ROCm extras the pyprojects declare."""
    text_of = texts.text_of
    comps: dict[str, list[str]] = {}
    extras: dict[str, list[tuple[str, int, str]]] = {}
    dist_names: set[str] = set()
    for f in own_files:
        name = pure(f.path).name
        directory = parent_dir(f.path)
        if PYPROJECTS.match(name):
            for extra, line in rocm_extras(f.path, text_of(f.path)):
                extras.setdefault(directory, []).append((f.path, line, extra))
        if name == "setup.py" and by_text("calls setup", text_of(f.path),
                                          partial(_calls_setup, text_of(f.path), texts.tree_of, f.path)):
            comps.setdefault(directory, []).append(f.path)
            dist_names |= setup_names(text_of(f.path)) | extension_names(text_of(f.path))
        elif name == "pyproject.toml":
            is_dist, data = _pyproject_is_distribution(text_of(f.path))
            if is_dist:
                comps.setdefault(directory, []).append(f.path)
                name_value = (data.get("project") or {}).get("name")
                if isinstance(name_value, str):
                    dist_names.add(name_value)
        elif name == "CMakeLists.txt" \
                and re.search(r"^[ \t]*project[ \t]*\(", text_of(f.path), re.MULTILINE | re.IGNORECASE):
            comps.setdefault(directory, []).append(f.path)
        elif name in ("Makefile", "makefile", "GNUmakefile") and compiles_cuda(text_of(f.path)):
            comps.setdefault(directory, []).append(f.path)
    return _Manifests(comps, extras, frozenset(dist_names))


def _components(project: ProjectBuild, comps: dict[str, list[str]], own_files: Sequence[SourceFile],
                optional_dirs: frozenset[str], text_of: Callable[[str], str],
                root_setup: ast.Module | None = None) -> list[str]:
    """The component directories, sorted, each marked primary, secondary or optional in the project (and
    whether the tree is a collection of programs). A CMake project its parent's add_subdirectory pulls in is
    part of the parent; a C/C++ build whose sources the root setup.py compiles is primary."""
    cmake_children = set()
    for f in own_files:
        if pure(f.path).name == "CMakeLists.txt":
            for target in set(re.findall(r"add_subdirectory\s*\(\s*\"?([^\s)\"]+)", text_of(f.path))):
                cmake_children.add(PurePosixPath(parent_dir(f.path), target).as_posix().removeprefix("./"))
    for child in list(comps):
        if child in cmake_children and all(pure(m).name == "CMakeLists.txt" for m in comps[child]):
            del comps[child]
    comps.setdefault(".", [])
    order = sorted(comps)
    root_installs = installed_by_path((f.path for f in own_files), text_of, order) \
        | compiled_by_setup(root_setup, [c for c in order if not any(_is_python_manifest(m) for m in comps[c])])
    for comp in order:
        parts = {p.lower() for p in pure(comp).parts}
        if comp != "." and parts & optional_dirs:
            project.components[comp] = "optional"
        elif comp == "." or not comps.get(".") or comp in root_installs:
            project.components[comp] = "primary"
        else:
            project.components[comp] = "secondary"
    roots_without_manifest = not comps.get(".")
    shallowest = min((x.count("/") for x in order if x != "."), default=0)
    programs = [c for c in order if c != "." and c.count("/") == shallowest]
    project.collection = roots_without_manifest and len(programs) >= 3
    return order


def _is_python_manifest(path: str) -> bool:
    return pure(path).name in ("setup.py", "pyproject.toml")


def _builds(project: ProjectBuild, mine: Sequence[SourceFile], texts: BuildTexts,
            switches: PythonPersona | None = None) -> tuple[list[PyBuild], list[CBuild]]:
    """A component's build scripts read: setup.py and op builders, CMake files, Makefiles (their CUDA-only
    lines, opt-in lines and anything left unread go into the project)."""
    text_of = texts.text_of
    pybuilds: list[PyBuild] = []
    cbuilds: list[CBuild] = []
    for f in mine:
        name = pure(f.path).name
        if name == "setup.py" or (f.kind == "python" and "op_builder" in pure(f.path).parts):
            built = _python_build(f.path, text_of(f.path), texts.parses(f.path), project.unread, switches)
            if built:
                pybuilds.append(built)
                project.cuda_build_lines[f.path] = frozenset(built.cuda_lines)
        elif name == "CMakeLists.txt" or name.endswith(".cmake"):
            built_c = read_cmake(f.path, text_of(f.path))
            cbuilds.append(built_c)
            if built_c.partial:
                project.unread[f.path] = built_c.partial
            project.cuda_build_lines[f.path] = frozenset(built_c.cuda_lines)
        elif name in ("Makefile", "makefile", "GNUmakefile") or name.endswith(".mk"):
            made = read_makefile(f.path, text_of(f.path))
            cbuilds.append(made)
            if made.partial:
                project.unread[f.path] = made.partial
            if made.opt_in_lines:
                project.optional_lines[f.path] = frozenset(made.opt_in_lines)
    return pybuilds, cbuilds


def _and_build_macros(rocm: set[str], cuda: set[str], pybuilds: Sequence[PyBuild],
                      cbuilds: Sequence[CBuild]) -> tuple[set[str], set[str]]:
    """The macros so far with those a component's builds define for ROCm and only for CUDA."""
    return (rocm | {m for b in pybuilds for m in b.rocm_macros} | {m for b in cbuilds for m in b.rocm_macros},
            cuda | {m for b in pybuilds for m in b.cuda_macros} | {m for b in cbuilds for m in b.cuda_macros}
            | _cuda_subdirectory_macros(cbuilds))


def _cuda_subdirectory_macros(cbuilds: Sequence[CBuild]) -> set[str]:
    """Macros a CMake file defines unconditionally where its parent adds its directory only for CUDA
    (`if(BUILD_CUDA) add_subdirectory(cuda)`, `cuda/CMakeLists.txt`: `target_compile_definitions(... COMPILING_CUDA)`):
    only the CUDA build defines them."""
    cuda_dirs = {posixpath.normpath(posixpath.join(parent_dir(b.path), target))
                 for b in cbuilds for target, config in b.subdirs.items() if config == "cuda"}
    return {m for b in cbuilds if parent_dir(b.path) in cuda_dirs for m in b.unconditional_macros}


def _with_build_macros(facts: PreprocFacts | None, rocm: set[str], cuda: set[str]) -> PreprocFacts | None:
    """The preprocessor facts with the macros the builds read so far define for ROCm or only for CUDA: an
    `#include` under `#ifdef COMPILING_CUDA` does not pull a header into the ROCm build."""
    if facts is None or (rocm <= facts.rocm_defined and not cuda - rocm - facts.cuda_only_defined):
        return facts
    return replace(facts, rocm_defined=facts.rocm_defined | rocm,
                   cuda_only_defined=facts.cuda_only_defined | (cuda - rocm - facts.rocm_defined))


def _redefined_for_rocm(mine: Sequence[SourceFile], facts: PreprocFacts, text_of: Callable[[str], str],
                        shims: set[str], rocm_macros: set[str]) -> dict[str, str]:
    """The names the component's C/C++ files redefine for the ROCm build, each with its first path:line. The
    project's own ROCm switches (`GG_USE_HIP`, which its HIP build defines) open their branches too."""
    if not rocm_macros <= facts.rocm_defined:
        facts = replace(facts, rocm_defined=facts.rocm_defined | rocm_macros)
    redefined: dict[str, str] = {}
    for f in mine:
        if f.kind in C_KINDS:
            for name, line in rocm_redefinitions(text_of(f.path), facts, f.path in shims).items():
                redefined.setdefault(name, f"{f.path}:{line}")
    return redefined


def _note_shipped_python(project: ProjectBuild, comp: str, mine, pybuilds: list[PyBuild],
                         texts: BuildTexts, optional_dirs: frozenset[str], manifests: Sequence[str]) -> None:
    """The component's shipped packages, the CUDA-only artifacts its shipped Python can do without
    (auditor/model/rocmpath/tolerated.py), the extensions the install goes on without, and what it runs."""
    project.shipped_python[comp] = packages(comp, mine, declared_packages(manifests, texts.text_of, texts.tree_of))
    project.tolerated_artifacts.update(tolerated_artifacts(
        set(project.cuda_only_artifact_files.values()) - set(project.tolerated_artifacts),
        project.shipped_python[comp], mine, texts.text_of))
    optional_builds(project, comp, mine, pybuilds, texts.tree_of, texts.text_of, optional_dirs)
    note_install_runs(project, comp, mine, manifests, texts.text_of, pybuilds)


def _note_opt_ins_and_shuffles(project: ProjectBuild, files: Sequence[SourceFile], text_of: Callable[[str], str],
                               facts: PreprocFacts | None, optional_macros: set[str]) -> None:
    """The opt-in macros (the C builds' `optional_macros`, `-D` flags behind a setup.py environment opt-in, debug
    switches nothing defines), the lines behind them, the files that test them (auditor/model/rocmpath/optinlibs.py),
    and the calls of shuffle macros ROCm expands to a wavefront-wide shuffle (auditor/model/rocmpath/wideshuffle.py)."""
    setups = {f.path: by_text("opt-in lines", text_of(f.path), partial(opt_in_lines, text_of(f.path)))
              for f in files if pure(f.path).name == "setup.py"}
    optional_macros |= {m for path, lines in setups.items() for m in opt_in_macros(text_of(path), lines)}
    project.optional_macros = frozenset(optional_macros - project.rocm_macros) | _debug_switches(files, text_of)
    _mark_lines_behind_optional_macros(project, files, text_of, setups)
    c_files = [f for f in files if f.kind in C_KINDS]
    project.opt_in_tests = opt_in_tests(c_files, text_of, project.optional_macros)
    if facts is not None:
        project.wide_shuffles = wide_shuffle_uses(c_files, text_of, wide_shuffle_macros(c_files, text_of, facts))


def _mark_lines_behind_optional_macros(project: ProjectBuild, files: Sequence[SourceFile],
                                       text_of: Callable[[str], str], setups: Mapping[str, frozenset[int]]) -> None:
    """The C/C++ lines inside `#if` branches on the project's opt-in and debug macros, and `setups`' lines (each
    setup.py's behind an environment opt-in that is off by default), are optional features. Other modules' opt-in
    lines are the Python engine's, found in the workers (FileFacts.opt_in_lines)."""
    for path, lines in setups.items():
        if lines:
            project.optional_lines[path] = project.optional_lines.get(path, frozenset()) | lines
    if project.optional_macros:
        for f in files:
            if f.kind in C_KINDS:
                lines = behind_macros(text_of(f.path), project.optional_macros)
                if lines:
                    project.optional_lines[f.path] = project.optional_lines.get(f.path, frozenset()) | lines


def _debug_switches(files: Sequence[SourceFile], text_of: Callable[[str], str]) -> frozenset[str]:
    tested = tested_switches(text_of(f.path) for f in files if f.kind in C_KINDS)
    if not tested:
        return frozenset()
    builds = (text_of(f.path) for f in files if f.kind in BUILD_INPUTS or pure(f.path).name == "setup.py"
              or (f.kind == "python" and "op_builder" in pure(f.path).parts))
    return undefined_switches(tested, builds)


