"""Which configuration compiles each source file of a component (docs/reach-model.md):
from the builds' source lists, then through `#include` edges; plus the lines behind opt-in macros and the
Python packages a component ships."""
from __future__ import annotations

import fnmatch
import functools
import posixpath
import re

from auditor.match.inputs.kinds import C_FAMILY
from auditor.parse.nesting import MAX_NESTING
from auditor.parse.preproc import line_states
from auditor.truth.cpp import PreprocFacts
from auditor.model.rocmpath.declaredpackages import Declared
from auditor.model.rocmpath.cmakebuild import subdir_config
from auditor.model.rocmpath.model import ProjectBuild
from auditor.util.purepaths import pure

C_KINDS = C_FAMILY
INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"]+)[>"]', re.MULTILINE)
NOT_SHIPPED = {"tests", "test", "testing", "examples", "example", "benchmarks", "benchmark", "docs", "doc",
               "scripts", "tools", "ci", "build", "dist", "csrc"}


def parent_dir(path: str) -> str:
    parent = pure(path).parent.as_posix()
    return "." if parent in ("", ".") else parent


def within(path: str, comp: str) -> bool:
    return comp == "." or path == comp or path.startswith(comp + "/")


def relative_to(path: str, comp: str) -> str:
    return path if comp == "." else path[len(comp) + 1:]


def _matches(rel: str, pattern: str) -> bool:
    pattern = pattern.replace("\\", "/").lstrip("./")
    if "*" in pattern:
        return fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(rel, "*/" + pattern)
    return rel == pattern or rel.endswith("/" + pattern)


def _resolved(base: str, pattern: str, comp: str) -> str | None:
    """`../ggml-cuda/*.cu` listed in `src/ggml-hip/CMakeLists.txt` is `src/ggml-cuda/*.cu`, relative to the
    component; None when it leaves the tree or the component."""
    joined = posixpath.normpath(posixpath.join(base, pattern))
    if joined == ".." or joined.startswith("../") or joined.startswith("/") or not within(joined, comp):
        return None
    return relative_to(joined, comp)


def provenance(project: ProjectBuild, comp: str, mine, pybuilds, cbuilds, text_of,
               facts: PreprocFacts | None = None) -> None:
    """Which configuration compiles each C/C++/CUDA file of the component: from the build's source lists,
    then through `#include` edges. Files no list reaches stay unknown (treated as compiled). With `facts`,
    an `#include` on a branch a ROCm build skips (`#ifndef USE_ROCM`) carries only the CUDA configuration."""
    patterns = _source_patterns(comp, pybuilds, cbuilds)
    c_files = [f for f in mine if f.kind in C_KINDS]
    roles: dict[str, set[str]] = {}
    for f in c_files:
        rel = relative_to(f.path, comp)
        for pattern, configs in patterns.items():
            if _matches(rel, pattern):
                roles.setdefault(f.path, set()).update(configs)
    _spread_through_includes(roles, c_files, text_of, facts)
    for path, configs in roles.items():
        project.provenance[path] = _role(configs)
    for b in pybuilds:
        for artifact, configs in b.artifacts.items():
            if configs & {"rocm", "both"}:
                continue
            for pattern in b.artifact_sources.get(artifact, ()):
                for f in c_files:
                    if _matches(relative_to(f.path, comp), pattern):
                        project.cuda_only_artifact_files[f.path] = artifact
    rocm = project.paths.get(comp)
    if rocm is not None and rocm.verified and not rocm.gpu_sources and not roles:
        # nothing is compiled at install: GPU sources are compiled on first use (a JIT kernel backend the
        # shipped code selects at run time), like op builders' sources
        for f in c_files:
            project.provenance.setdefault(f.path, "opt-in")
    if roles:   # the build lists its sources: a file no list or include reaches is not built
        for f in c_files:
            project.provenance.setdefault(f.path, "unreferenced")
    for b in pybuilds:
        for line in b.fenced_on_rocm:
            for pattern in b.sources:
                for f in c_files:
                    if _matches(relative_to(f.path, comp), pattern):
                        project.fenced[f.path] = f"{b.path}:{line}"


def artifact_files(comp: str, build, artifact: str, mine) -> list[str]:
    """The C/C++/CUDA files of the component a build script lists as the artifact's sources."""
    return [f.path for f in mine if f.kind in C_KINDS and any(
        _matches(relative_to(f.path, comp), pattern) for pattern in build.artifact_sources.get(artifact, ()))]


def _source_patterns(comp: str, pybuilds, cbuilds) -> dict[str, set[str]]:
    """Each source pattern the component's builds list (relative to the component), with the configurations
    that compile it; a CMake subdirectory added for one configuration stands for every file under it."""
    patterns: dict[str, set[str]] = {}
    on_demand = not any(b.artifacts for b in pybuilds if pure(b.path).name == "setup.py")
    for b, from_cmake in [(b, False) for b in pybuilds] + [(b, True) for b in cbuilds]:
        base = parent_dir(b.path)
        op_builder = "op_builder" in pure(b.path).parts
        if op_builder:   # sources an op builder compiles on first use (JIT) when the install builds no extension
            base = comp
        for pattern, configs in b.sources.items():
            if op_builder and on_demand:
                configs = {"opt-in"}
            elif from_cmake:   # `ggml-hip/CMakeLists.txt` is the HIP backend's build, `ggml-sycl/…` SYCL's
                configs = {subdir_config(base, config) for config in configs}
            if "${" in pattern:
                continue
            key = _pattern_key(base, pattern, comp)
            if key is not None:
                patterns.setdefault(key, set()).update(configs)
    for b in cbuilds:
        for target, config in b.subdirs.items():
            if config in ("rocm", "cuda", "other-backend"):
                base = parent_dir(b.path)
                prefix = relative_to(base, comp) + "/" if base != comp and base != "." else ""
                patterns.setdefault(f"{prefix}{target}/*", set()).add(config)
    return patterns


def _pattern_key(base: str, pattern: str, comp: str) -> str | None:
    """A source pattern a build file in `base` lists, relative to the component (None: outside it)."""
    if ".." in pure(pattern).parts:
        return _resolved(base, pattern, comp)
    nested = base != "." and comp != base and within(base, comp)
    return f"{relative_to(base, comp)}/{pattern}" if nested else pattern


def _spread_through_includes(roles: dict[str, set[str]], c_files, text_of, facts: PreprocFacts | None) -> None:
    """A header takes the configurations of the files that include it, transitively (`roles` grows)."""
    by_name: dict[str, list[str]] = {}
    for f in c_files:
        by_name.setdefault(pure(f.path).name, []).append(f.path)
    frontier = list(roles)
    seen_edges: set[tuple[str, str, frozenset[str]]] = set()
    while frontier:
        path = frontier.pop()
        for target, carried in _includes(text_of(path), roles[path], facts):
            candidates = by_name.get(pure(target).name, [])
            beside = posixpath.normpath(posixpath.join(parent_dir(path), target))
            if beside in candidates:   # `#include "x.cuh"` finds the includer's own directory first
                candidates = [beside]
            for candidate in candidates:
                if not candidate.endswith(target.lstrip("./")) or (path, candidate, frozenset(carried)) in seen_edges:
                    continue
                seen_edges.add((path, candidate, frozenset(carried)))
                before = set(roles.get(candidate, set()))
                roles.setdefault(candidate, set()).update(carried)
                if roles[candidate] != before:
                    frontier.append(candidate)


def _role(configs: set[str]) -> str:
    """A file's provenance from the configurations that compile it."""
    if "both" in configs or {"rocm", "cuda"} <= configs:
        return "both"
    if configs == {"rocm"}:
        return "rocm"
    if configs == {"cuda"}:
        return "cuda"
    if "other-backend" in configs and not configs & {"rocm", "both"}:
        return "other-backend"
    if configs == {"opt-in"}:
        return "opt-in"
    return "both"


def _includes(text: str, configs: set[str], facts: PreprocFacts | None):
    """(included name, the configurations that see the include) for each `#include` of a file compiled in
    `configs`."""
    return [(name, set(seen)) for name, seen in _remembered_includes(text, frozenset(configs), facts)]


@functools.lru_cache(maxsize=4096)
def _remembered_includes(text: str, configs: frozenset[str], facts: PreprocFacts | None
                         ) -> tuple[tuple[str, frozenset[str]], ...]:
    """_includes, remembered: `history` reads the same headers at every point."""
    found = list(INCLUDE.finditer(text))
    if not found:
        return ()
    excluded: frozenset[int] = frozenset()
    if facts is not None and configs & {"rocm", "both"}:
        excluded = line_states(text, facts).excluded
    out = []
    line, position = 1, 0
    for m in found:
        line += text.count("\n", position, m.start())
        position = m.start()
        out.append((m.group(1), frozenset({"cuda"}) if line in excluded else configs))
    return tuple(out)


def packages(comp: str, mine, declared: Declared | None = None) -> frozenset[str]:
    """Top-level package directories the component ships (with an __init__.py; a src/ layout too), those its
    manifest declares when it declares them (auditor/model/rocmpath/declaredpackages.py)."""
    out: set[str] = set()
    for f in mine:
        if pure(f.path).name != "__init__.py":
            continue
        parts = pure(relative_to(f.path, comp)).parts
        if len(parts) >= 2 and parts[0] == "src" and len(parts) >= 3:
            top = f"src/{parts[1]}"
        elif len(parts) >= 2:
            top = parts[0]
        else:
            continue
        if pure(top).name.lower() in NOT_SHIPPED or (declared and not declared.ships(pure(top).name)):
            continue
        out.add(top if comp == "." else f"{comp}/{top}")
    return frozenset(out)


# `#if !defined(X)`, `#if !X`: a test that one macro is unset (its #else is the branch the macro turns on)
UNSET_TEST = re.compile(r"\s*!\s*(?:defined\s*\(?\s*)?\w+\s*\)?\s*(?://.*|/\*.*)?")


def behind_macros(text: str, macros: frozenset[str]) -> frozenset[int]:
    """Lines inside `#if`/`#ifdef` branches whose test names one of these macros (not their #else), and the #else
of a test that one is undefined (`#ifndef X`, `#if !defined(X)`: the default build takes its first branch)."""
    if not any(m in text for m in macros):
        return frozenset()
    out: set[int] = set()
    stack: list[bool] = []
    negated: list[bool] = []   # per level: the #else is the opt-in branch
    for number, line in enumerate(text.splitlines(), start=1):
        m = re.match(r"\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b(.*)", line)
        if m:
            word, rest = m.group(1), m.group(2)
            # a directive inside the block is behind it too (a finding on `#if defined(__CUDA_ARCH__)` there)
            if any(stack if word in ("if", "ifdef", "ifndef") else stack[:-1]):
                out.add(number)
            if word in ("if", "ifdef", "ifndef") and len(stack) >= MAX_NESTING:
                break
            if word in ("if", "ifdef", "ifndef"):
                named = any(re.search(rf"\b{re.escape(x)}\b", rest) for x in macros)
                unset = named and (word == "ifndef" or UNSET_TEST.fullmatch(rest) is not None)
                stack.append(named and not unset)
                negated.append(unset)
            elif word == "else" and stack:
                stack[-1], negated[-1] = negated[-1], False
            elif word == "elif" and stack:
                stack[-1] = negated[-1] = False
            elif word == "endif" and stack:
                stack.pop()
                negated.pop()
            continue
        if any(stack):
            out.add(number)
    return frozenset(out)
