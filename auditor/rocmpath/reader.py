"""Read the build files of a tree (never run them) into a ProjectBuild: components, each one's ROCm path,
the configuration that compiles each source file, and the project macros for the preprocessor."""
from __future__ import annotations

import ast
import re
import time
import tomllib
from collections.abc import Callable, Sequence
from pathlib import Path, PurePosixPath

from auditor.boundedio import UnsafeRead, read_text_bounded
from auditor.parsing.preproc import PreprocFacts
from auditor.rocmpath.debugswitch import tested_switches, undefined_switches
from auditor.rocmpath.deps import MAX_PYTHON_BUILD_CHARS, hard_dependencies
from auditor.rocmpath.rocmmanifests import PYPROJECTS, manifest_recipe, rocm_extras, rocm_requirements
from auditor.rocmpath.cmakebuild import CBuild, read_cmake, read_makefile
from auditor.rocmpath.ownnames import extension_names, setup_names
from auditor.rocmpath.model import Evidence, ProjectBuild, RocmPath
from auditor.rocmpath.pybuild import PyBuild, read_python_build
from auditor.rocmpath.provenance import (
    C_KINDS, NOT_SHIPPED, parent_dir, within, behind_macros, packages, provenance,
)
from auditor.rocmpath.backends import vendor_backends
from auditor.rocmpath.redefine import rocm_redefinitions, undefined_in_shims
from auditor.rocmpath.reqsets import unread_requirement_files
from auditor.types import SourceFile

MAX_BUILD_BYTES = 2 * 1024 * 1024
BUILD_NAMES = frozenset({"setup.py", "pyproject.toml", "CMakeLists.txt", "Makefile", "makefile", "GNUmakefile"})
GPU_SUFFIXES = (".cu", ".cuh", ".hip")
SHIM_LINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(?:cu|CU)\w+[ \t]+(?:hip|HIP)\w+", re.MULTILINE)
# a CI job that builds or runs on ROCm: a ROCm image, an AMD runner, ROCm build settings or tools (a word such as
# "rocm" alone is not one: issue labelers and triage bots name it too)
ROCM_CI = re.compile(r"(?i)\brocm/[\w.-]+:|--offload-arch|PYTORCH_ROCM_ARCH"
                     r"|\bhipcc\b|whl/rocm|\bROCM_VERSION\b|\bgfx9\d\w\b|-D\w*HIP\w*=ON|BUILD_TARGET\W+rocm")
# the runner of a job, after `runs-on:` / `agents:` on the same line (read line by line: a pattern such as
# `runs-on:[^\n]*…` rescans the rest of the line from every `runs-on:` in it)
ROCM_RUNNER = {re.compile(r"(?i)runs-on:"): re.compile(r"(?i)\b(?:mi\d{3}\w*|rocm|amd)"),
               re.compile(r"(?i)agents:"): re.compile(r"(?i)\b(?:mi\d{3}\w*|amd)")}
REPO_AUTOMATION = re.compile(r"(?i)label|triage|stale|issue|welcome|greet|pr[-_]title|assign")
ROCM_DISPATCH = re.compile(r"torch\.version\.hip|\bis_hip\(\)|gcnArchName|\bamdsmi\b|IS_HIP_EXTENSION")


def read_build_file(source: SourceFile) -> str | None:
    """A build file's text; None when it is not a regular file of at most MAX_BUILD_BYTES."""
    try:
        return read_text_bounded(Path(source.abspath), MAX_BUILD_BYTES, "build file")
    except (OSError, UnsafeRead):
        return None


def _rocm_ci(text: str) -> bool:
    if ROCM_CI.search(text):
        return True
    for key, runner in ROCM_RUNNER.items():
        done = 0
        for m in key.finditer(text):
            if m.start() < done:
                continue        # on a line already searched from its first key
            end = text.find("\n", m.end())
            done = len(text) if end < 0 else end
            if runner.search(text, m.end(), done):
                return True
    return False


def is_build_file(path: str) -> bool:
    name = PurePosixPath(path).name
    return name in BUILD_NAMES or name.endswith((".cmake", ".mk")) or "op_builder" in PurePosixPath(path).parts


def _python_build(path: str, text: str, tree: ast.Module | None, unread: dict[str, str]) -> PyBuild | None:
    if tree is None:
        return None
    try:
        return read_python_build(path, text, tree)
    except RecursionError:   # the readers do not recurse on the tree's depth; kept as the last line of defence
        unread[path] = "not read as a build script: nested too deeply"
        return None


def _calls_setup(text: str, tree: ast.Module | None) -> bool:
    if tree is None:
        return "setup(" in text
    return any(isinstance(n, ast.Call) and (getattr(n.func, "id", None) or getattr(n.func, "attr", None)) == "setup"
               for n in ast.walk(tree))


def _pyproject_is_distribution(text: str) -> tuple[bool, dict]:
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError):
        return False, {}
    return ("project" in data or "build-system" in data), data




def owner(path: str, comps: Sequence[str]) -> str:
    best = "."
    for comp in comps:
        if comp != "." and within(path, comp) and len(comp) > len(best if best != "." else ""):
            best = comp
    return best




def read_project(
    files: Sequence[SourceFile], optional_dirs: frozenset[str] = frozenset(), pulled_in: Sequence[SourceFile] = (),
    facts: PreprocFacts | None = None, deadline: float | None = None,
) -> ProjectBuild:
    """`pulled_in`: build files of vendored code the tree's build includes (read for the ROCm path only);
    `facts`: the preprocessor under ROCm, so an include a ROCm build skips does not pull a header into it;
    `deadline`: a time.monotonic() after which no more files are read (each one left is noted in `unread`)."""
    project = ProjectBuild()
    texts: dict[str, str] = {}
    known = {f.path for f in files}
    own_files = list(files)
    files = own_files + [f for f in pulled_in if f.path not in known]
    by_path = {f.path: f for f in files}

    trees: dict[str, ast.Module | None] = {}

    def text_of(path: str) -> str:
        if path not in texts:
            if deadline is not None and time.monotonic() > deadline:
                texts[path] = ""
                if is_build_file(path):
                    project.unread[path] = "not read: the build pre-pass ran out of its time budget"
            else:
                text = read_build_file(by_path[path])
                texts[path] = text or ""
                if text is None and is_build_file(path):
                    project.unread[path] = f"not read: over {MAX_BUILD_BYTES // 2**20} MB or not a regular file"
        return texts[path]

    def tree_of(path: str) -> ast.Module | None:
        """A Python build script parsed once; None (and the file noted as unread) when it cannot be."""
        if path not in trees:
            text = text_of(path)
            trees[path] = None
            if len(text) > MAX_PYTHON_BUILD_CHARS:
                project.unread[path] = f"not read as a build script: over {MAX_PYTHON_BUILD_CHARS // 1024} KB"
            else:
                try:
                    trees[path] = ast.parse(text)
                except (SyntaxError, ValueError, MemoryError):
                    pass
                except RecursionError:
                    project.unread[path] = "not read as a build script: nested too deeply"
        return trees[path]

    # 1. components from real manifests
    comps: dict[str, list[str]] = {}
    extras: dict[str, list[tuple[str, int, str]]] = {}
    dist_names: set[str] = set()
    for f in own_files:
        name = PurePosixPath(f.path).name
        directory = parent_dir(f.path)
        if PYPROJECTS.match(name):
            for extra, line in rocm_extras(f.path, text_of(f.path)):
                extras.setdefault(directory, []).append((f.path, line, extra))
        if name == "setup.py" and _calls_setup(text_of(f.path), tree_of(f.path)):
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
        elif name in ("Makefile", "makefile", "GNUmakefile") and re.search(r"\bnvcc\b|\.cu\b", text_of(f.path)):
            comps.setdefault(directory, []).append(f.path)
    # a CMake project pulled in by its parent's add_subdirectory, or a Python one inside another's package, is
    # part of the parent
    cmake_children = set()
    for f in own_files:
        if PurePosixPath(f.path).name == "CMakeLists.txt":
            for target in set(re.findall(r"add_subdirectory\s*\(\s*\"?([^\s)\"]+)", text_of(f.path))):
                cmake_children.add(PurePosixPath(parent_dir(f.path), target).as_posix().removeprefix("./"))
    for child in list(comps):
        if child in cmake_children and all(PurePosixPath(m).name == "CMakeLists.txt" for m in comps[child]):
            del comps[child]
    comps.setdefault(".", [])
    order = sorted(comps)
    for comp in order:
        parts = {p.lower() for p in PurePosixPath(comp).parts}
        if comp != "." and parts & optional_dirs:
            project.components[comp] = "optional"
        elif comp == "." or not comps.get("."):
            project.components[comp] = "primary"
        else:
            project.components[comp] = "secondary"
    roots_without_manifest = not comps.get(".")
    shallowest = min((x.count("/") for x in order if x != "."), default=0)
    programs = [c for c in order if c != "." and c.count("/") == shallowest]
    project.collection = roots_without_manifest and len(programs) >= 3

    # 2. each component's builds
    owned: dict[str, list[SourceFile]] = {c: [] for c in order}
    for f in files:
        owned[owner(f.path, order)].append(f)
    rocm_macros: set[str] = set()
    cuda_macros: set[str] = set()
    optional_macros: set[str] = set()
    shims: set[str] = set()
    python_packages: list[tuple[frozenset[str], tuple[SourceFile, ...]]] = []
    unread: set[str] = set()
    for comp in order:
        mine = owned[comp]
        pybuilds: list[PyBuild] = []
        cbuilds: list[CBuild] = []
        for f in mine:
            name = PurePosixPath(f.path).name
            if name == "setup.py" or (f.kind == "python" and "op_builder" in PurePosixPath(f.path).parts):
                built = _python_build(f.path, text_of(f.path), tree_of(f.path), project.unread)
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
        for b in pybuilds:
            rocm_macros |= b.rocm_macros
            cuda_macros |= b.cuda_macros
        for cb in cbuilds:
            rocm_macros |= cb.rocm_macros
            cuda_macros |= cb.cuda_macros
            optional_macros |= cb.optional_macros
        hip_build = any(b.builds_on_rocm for b in cbuilds) or any(b.builds_on_rocm for b in pybuilds)
        comp_shims = {f.path for f in mine if f.kind in C_KINDS and len(SHIM_LINE.findall(text_of(f.path))) >= 5}
        if hip_build:
            shims |= comp_shims
            if facts is not None:
                redefined: dict[str, str] = {}
                for f in mine:
                    if f.kind in C_KINDS:
                        for name, line in rocm_redefinitions(text_of(f.path), facts, f.path in comp_shims).items():
                            redefined.setdefault(name, f"{f.path}:{line}")
                if redefined:
                    project.rocm_redefinitions[comp] = redefined
        project.paths[comp] = _rocm_path(comp, mine, pybuilds, cbuilds, comp_shims if hip_build else set(),
                                         extras.get(comp, []), text_of)
        provenance(project, comp, mine, pybuilds, cbuilds, text_of, facts)
        project.shipped_python[comp] = packages(comp, mine)
        python_packages.append((project.shipped_python[comp], tuple(f for f in mine if f.kind == "python")))
        unread |= unread_requirement_files([f.path for f in mine if f.path in known], text_of)
    project.rocm_macros = frozenset(rocm_macros)
    project.cuda_macros = frozenset(cuda_macros - rocm_macros)
    project.optional_macros = frozenset(optional_macros - rocm_macros) | _debug_switches(files, text_of)
    if project.optional_macros:
        for f in files:
            if f.kind in C_KINDS:
                lines = behind_macros(text_of(f.path), project.optional_macros)
                if lines:
                    project.optional_lines[f.path] = project.optional_lines.get(f.path, frozenset()) | lines
    project.shims = frozenset(shims)
    project.undefined_on_rocm = undefined_in_shims(project.paths.values(), {p: text_of(p) for p in shims})
    project.python_packages = tuple(python_packages)
    project.unread_requirements = frozenset(unread)
    project.vendor_backends = vendor_backends(own_files)
    project.own_packages = frozenset(PurePosixPath(p).name for pkgs in project.shipped_python.values() for p in pkgs) \
        | frozenset(dist_names)
    project.dependencies = hard_dependencies(own_files, text_of)
    return project


def _debug_switches(files: Sequence[SourceFile], text_of: Callable[[str], str]) -> frozenset[str]:
    tested = tested_switches(text_of(f.path) for f in files if f.kind in C_KINDS)
    if not tested:
        return frozenset()
    build_kinds = ("build", "manifest", "bazel", "conda", "container", "ci", "shell")
    builds = (text_of(f.path) for f in files if f.kind in build_kinds or PurePosixPath(f.path).name == "setup.py"
              or (f.kind == "python" and "op_builder" in PurePosixPath(f.path).parts))
    return undefined_switches(tested, builds)


def _line_of(text: str, word: str) -> int:
    for number, line in enumerate(text.splitlines(), start=1):
        if re.search(rf"\b{re.escape(word)}\b", line):
            return number
    return 1


def _rocm_path(comp, mine, pybuilds, cbuilds, shims, extras, text_of) -> RocmPath:
    evidence: list[Evidence] = []
    refusals: list[str] = []
    rocm_artifacts: set[str] = set()
    cuda_artifacts: set[str] = set()
    for b in pybuilds:
        refusals += [f"{b.path}:{line}" for line in b.refusals]
        if b.builds_on_rocm and len(b.refusals) < len(b.rocm_tests):
            line, what = (b.evidence[0] if b.evidence else (b.rocm_tests[0], "ROCm branch"))
            evidence.append(Evidence("P1", f"{b.path}:{b.rocm_tests[0]}",
                                     f"switches to a ROCm build (`{what[:50]}` at {b.path}:{line})"))
        for line in b.hipify[:1]:
            evidence.append(Evidence("P3", f"{b.path}:{line}", "runs hipify on the CUDA sources at build time"))
        for name, configs in b.artifacts.items():
            if configs & {"rocm", "both"}:
                rocm_artifacts.add(name)
            if configs & {"cuda", "both"}:
                cuda_artifacts.add(name)
            if configs >= {"rocm", "cuda"}:
                evidence.append(Evidence("P4", f"{b.path}:{b.artifact_lines.get((name, 'rocm'), 1)}",
                                         f"builds `{name}` from other sources on ROCm"))
        for line in b.fenced_on_rocm[:1]:
            evidence.append(Evidence("P7", f"{b.path}:{line}", "fences an op off on ROCm"))
        if b.uses_cuda_extension and b.rocm_tests and not b.hipify and b.builds_on_rocm and not b.artifacts:
            evidence.append(Evidence("P3", f"{b.path}:{b.rocm_tests[0]}",
                                     "builds a CUDAExtension, which ROCm PyTorch hipifies at build time"))
    for b in cbuilds:
        refusals += [f"{b.path}:{line}" for line in b.refusals]
        if b.builds_on_rocm:
            line, what = b.evidence[0]
            evidence.append(Evidence("P1", f"{b.path}:{line}", f"builds for HIP (`{what[:70]}`)"))
    for shim in sorted(shims)[:1]:
        evidence.append(Evidence("P2", f"{shim}:1", "maps CUDA names to HIP for the HIP build (a shim)"))
    for path, line, extra in extras:
        evidence.append(Evidence("P6", f"{path}:{line}", f"declares a ROCm extra `{extra}`"))
    rocm_reqs = [f.path for f in mine if f.kind == "manifest" and rocm_requirements(f.path)]
    for path in rocm_reqs:
        evidence.append(Evidence("P6", f"{path}:1", "lists ROCm requirements"))
    ci = tuple(sorted(f.path for f in mine if f.kind == "ci" and not REPO_AUTOMATION.search(PurePosixPath(f.path).name)
                      and _rocm_ci(text_of(f.path))))
    dispatch = next(((f.path, m) for f in mine if f.kind == "python" and PurePosixPath(f.path).name != "setup.py"
                     and not set(PurePosixPath(f.path).parts) & NOT_SHIPPED
                     and (m := ROCM_DISPATCH.search(text_of(f.path)))), None)
    if dispatch:
        path, m = dispatch
        line = text_of(path).count("\n", 0, m.start()) + 1
        evidence.append(Evidence("P5", f"{path}:{line}", f"branches on `{m.group(0)}` in shipped code"))
    compiles_gpu = any(b.uses_cuda_extension or b.artifacts for b in pybuilds) or any(b.compiles_cu for b in cbuilds)
    # GPU sources only a JIT `load()` compiles are hipified by ROCm PyTorch at load time
    gpu = sum(1 for f in mine if f.path.endswith(GPU_SUFFIXES)) if compiles_gpu else 0
    verified = any(e.pattern in ("P1", "P2", "P3", "P4") for e in evidence) or (
        not compiles_gpu and any(e.pattern in ("P5", "P6") for e in evidence))
    setup = next((b for b in pybuilds if PurePosixPath(b.path).name == "setup.py"), None)
    recipe = ""
    if verified and not compiles_gpu:
        recipe = manifest_recipe(rocm_reqs, [(path, extra) for path, _, extra in extras]) \
            or "pip install . (pure Python: it runs on ROCm PyTorch)"
    elif verified and setup is not None and (not any(b.builds_on_rocm for b in cbuilds)
                                             or re.search(r"(?i)\bcmake", text_of(setup.path))):
        # (a setup.py that runs CMake itself, as vLLM's does, is still installed with pip)
        recipe = "pip install --no-build-isolation . on ROCm PyTorch"
    elif verified and any(PurePosixPath(b.path).name == "CMakeLists.txt" for b in cbuilds):
        option = next((b.rocm_option for b in cbuilds if b.rocm_option), "")
        pyprojects = [f.path for f in mine if PurePosixPath(f.path).name == "pyproject.toml"]
        if any(re.search(r"scikit[-_]build|py[-_]build[-_]cmake", text_of(p)) for p in pyprojects):
            # the Python build backend runs CMake and takes its options from CMAKE_ARGS (llama-cpp-python)
            recipe = f'CMAKE_ARGS="{option}" pip install .' if option else "pip install ."
        else:
            recipe = f"cmake -B build {option} && cmake --build build".replace("  ", " ")
            if setup is not None or pyprojects:
                recipe += ", then pip install ."
    elif verified and cbuilds:
        recipe = "make (its default configuration builds with hipcc)"
    confidence = "high" if verified and ci else "medium" if verified else "low"
    return RocmPath(
        component=comp, evidence=tuple(evidence), verified=verified, refusals=tuple(refusals),
        rocm_artifacts=tuple(sorted(rocm_artifacts)), cuda_artifacts=tuple(sorted(cuda_artifacts)),
        cuda_only_artifacts=tuple(sorted(cuda_artifacts - rocm_artifacts)), recipe=recipe,
        confidence=confidence, ci=ci, gpu_sources=gpu,
    )
