"""A component's ROCm path (docs/reach-model.md): the evidence of each pattern (P1-P7) its builds, shims,
manifests, CI and shipped code show, whether it is verified, the install recipe and the confidence."""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import PurePosixPath

from auditor.model.rocmpath.cmakebuild import CBuild
from auditor.model.rocmpath.model import BUILDS_ON_ROCM, RUNS_ON_ROCM, Evidence, RocmPath, RocmPattern
from auditor.model.rocmpath.provenance import NOT_SHIPPED
from auditor.model.rocmpath.pybuild import PyBuild
from auditor.model.rocmpath.rocmmanifests import manifest_recipe, rocm_requirements
from auditor.truth.markers import rocm_ci, rocm_dispatch
from auditor.types import SourceFile

GPU_SUFFIXES = (".cu", ".cuh", ".hip")
REPO_AUTOMATION = re.compile(r"(?i)label|triage|stale|issue|welcome|greet|pr[-_]title|assign")


def rocm_path(comp: str, mine: Sequence[SourceFile], pybuilds: Sequence[PyBuild], cbuilds: Sequence[CBuild],
              shims: set[str], extras: Sequence[tuple[str, int, str]], text_of: Callable[[str], str]) -> RocmPath:
    built = _build_evidence(pybuilds, cbuilds)
    rocm_reqs = [f.path for f in mine if f.kind == "manifest" and rocm_requirements(f.path)]
    ci = tuple(sorted(f.path for f in mine if f.kind == "ci" and not REPO_AUTOMATION.search(PurePosixPath(f.path).name)
                      and rocm_ci(text_of(f.path))))
    evidence = [*built.evidence, *_declared_evidence(shims, extras, rocm_reqs), *_dispatch_evidence(mine, text_of)]
    compiles_gpu = any(b.uses_cuda_extension or b.artifacts for b in pybuilds) or any(b.compiles_cu for b in cbuilds)
    # GPU sources only a JIT `load()` compiles are hipified by ROCm PyTorch at load time, and so are those of a torch
    # extension a ROCm install builds (BuildExtension runs HIPIFY on them): neither needs a HIP build of its own
    gpu = sum(1 for f in mine if f.path.endswith(GPU_SUFFIXES)) \
        if compiles_gpu and not _torch_hipifies(pybuilds, cbuilds) else 0
    verified = any(e.pattern in BUILDS_ON_ROCM for e in evidence) or (
        not compiles_gpu and any(e.pattern in RUNS_ON_ROCM for e in evidence))
    recipe = _recipe(compiles_gpu, mine, pybuilds, cbuilds, rocm_reqs, extras, text_of) if verified else ""
    confidence = "high" if verified and ci else "medium" if verified else "low"
    rocm_artifacts, cuda_artifacts = built.rocm_artifacts, built.cuda_artifacts
    return RocmPath(
        component=comp, evidence=tuple(evidence), verified=verified, refusals=built.refusals,
        rocm_artifacts=tuple(sorted(rocm_artifacts)), cuda_artifacts=tuple(sorted(cuda_artifacts)),
        cuda_only_artifacts=tuple(sorted(cuda_artifacts - rocm_artifacts)), recipe=recipe,
        confidence=confidence, ci=ci, gpu_sources=gpu,
    )


def _torch_hipifies(pybuilds: Sequence[PyBuild], cbuilds: Sequence[CBuild]) -> bool:
    """Every GPU build is a torch extension whose every artifact the ROCm configuration builds too (not only behind
    a CUDA test such as `CUDA_HOME is not None`), and no CMake or Make build compiles `.cu` files."""
    gpu_builds = [b for b in pybuilds if b.uses_cuda_extension or b.artifacts]
    return bool(gpu_builds) and not any(b.compiles_cu for b in cbuilds) and all(
        b.uses_cuda_extension and b.artifacts and all(configs & {"rocm", "both"} for configs in b.artifacts.values())
        for b in gpu_builds)


def with_built_gpu_sources(rocm: RocmPath, gpu_files: Sequence[str], skipped: Callable[[str], bool]) -> RocmPath:
    """The path once the sources the default install skips are known (`skipped`: ProjectBuild.skipped_by_default):
    GPU sources need a HIP build only when the install compiles one of them."""
    if not rocm.gpu_sources or not all(skipped(path) for path in gpu_files):
        return rocm
    return replace(rocm, gpu_sources=0)


@dataclass(frozen=True, slots=True)
class _BuildEvidence:
    evidence: tuple[Evidence, ...]
    refusals: tuple[str, ...]            # path:line of ROCm branches that only raise or exit
    rocm_artifacts: frozenset[str]       # built in the ROCm configuration
    cuda_artifacts: frozenset[str]       # built in the CUDA configuration


def _build_evidence(pybuilds: Sequence[PyBuild], cbuilds: Sequence[CBuild]) -> _BuildEvidence:
    """What the build scripts show: a backend switch (P1), HIPIFY at build time (P3), an artifact built from
    other sources on ROCm (P4), an op fenced off on ROCm (P7); the refusals and the artifacts per configuration."""
    evidence: list[Evidence] = []
    refusals: list[str] = []
    rocm_artifacts: set[str] = set()
    cuda_artifacts: set[str] = set()
    for b in pybuilds:
        refusals += [f"{b.path}:{line}" for line in b.refusals]
        if b.builds_on_rocm and len(b.refusals) < len(b.rocm_tests):
            line, what = (b.evidence[0] if b.evidence else (b.rocm_tests[0], "ROCm branch"))
            evidence.append(Evidence(RocmPattern.BACKEND_SWITCH, f"{b.path}:{b.rocm_tests[0]}",
                                     f"switches to a ROCm build (`{what[:50]}` at {b.path}:{line})"))
        for line in b.hipify[:1]:
            evidence.append(Evidence(RocmPattern.BUILD_TIME_HIPIFY, f"{b.path}:{line}",
                                     "runs hipify on the CUDA sources at build time"))
        for name, configs in b.artifacts.items():
            if configs & {"rocm", "both"}:
                rocm_artifacts.add(name)
            # an extension only an opt-in builds (`--enable-x` on the command line) is no vendor's default build
            if configs & {"cuda", "both"} and b.artifact_lines.get((name, "cuda")) not in b.opt_in_lines:
                cuda_artifacts.add(name)
            if configs >= {"rocm", "cuda"}:
                evidence.append(Evidence(RocmPattern.ALTERNATIVE_IMPLEMENTATION,
                                         f"{b.path}:{b.artifact_lines.get((name, 'rocm'), 1)}",
                                         f"builds `{name}` from other sources on ROCm"))
        for line in b.fenced_on_rocm[:1]:
            evidence.append(Evidence(RocmPattern.FENCED_FEATURES, f"{b.path}:{line}", "fences an op off on ROCm"))
        if b.uses_cuda_extension and b.rocm_tests and not b.hipify and b.builds_on_rocm and not b.artifacts:
            evidence.append(Evidence(RocmPattern.BUILD_TIME_HIPIFY, f"{b.path}:{b.rocm_tests[0]}",
                                     "builds a CUDAExtension, which ROCm PyTorch hipifies at build time"))
    for cb in cbuilds:
        refusals += [f"{cb.path}:{line}" for line in cb.refusals]
        if cb.builds_on_rocm:
            line, what = cb.evidence[0]
            evidence.append(Evidence(RocmPattern.BACKEND_SWITCH, f"{cb.path}:{line}",
                                     f"builds for HIP (`{what[:70]}`)"))
    return _BuildEvidence(tuple(evidence), tuple(refusals), frozenset(rocm_artifacts), frozenset(cuda_artifacts))


def cuda_only_artifacts(pybuilds: Sequence[PyBuild]) -> frozenset[str]:
    """The extensions these build scripts build in the CUDA configuration and not in the ROCm one."""
    built = _build_evidence(pybuilds, ())
    return built.cuda_artifacts - built.rocm_artifacts


def _declared_evidence(shims: set[str], extras: Sequence[tuple[str, int, str]],
                       rocm_reqs: list[str]) -> list[Evidence]:
    """A shim header for the HIP build (P2); ROCm extras and requirement files (P6)."""
    evidence: list[Evidence] = []
    for shim in sorted(shims)[:1]:
        evidence.append(Evidence(RocmPattern.HIP_SHIM, f"{shim}:1",
                                 "maps CUDA names to HIP for the HIP build (a shim)"))
    for path, line, extra in extras:
        evidence.append(Evidence(RocmPattern.ROCM_PACKAGES, f"{path}:{line}", f"declares a ROCm extra `{extra}`"))
    for path in rocm_reqs:
        evidence.append(Evidence(RocmPattern.ROCM_PACKAGES, f"{path}:1", "lists ROCm requirements"))
    return evidence


def _dispatch_evidence(mine: Sequence[SourceFile], text_of: Callable[[str], str]) -> list[Evidence]:
    """The first shipped Python file that branches on ROCm at run time (P5)."""
    dispatch = next(((f.path, m) for f in mine if f.kind == "python" and PurePosixPath(f.path).name != "setup.py"
                     and not set(PurePosixPath(f.path).parts) & NOT_SHIPPED
                     and (m := rocm_dispatch(text_of(f.path)))), None)
    if not dispatch:
        return []
    path, m = dispatch
    line = text_of(path).count("\n", 0, m.start()) + 1
    return [Evidence(RocmPattern.PYTHON_DISPATCH, f"{path}:{line}", f"branches on `{m.group(0)}` in shipped code")]


def _recipe(compiles_gpu: bool, mine: Sequence[SourceFile], pybuilds: Sequence[PyBuild], cbuilds: Sequence[CBuild],
            rocm_reqs: list[str], extras: Sequence[tuple[str, int, str]], text_of: Callable[[str], str]) -> str:
    """How a verified ROCm path is installed: pip for pure Python or a setup.py, CMake with the backend option
    (through CMAKE_ARGS when the Python build backend runs CMake), or make."""
    setup = next((b for b in pybuilds if PurePosixPath(b.path).name == "setup.py"), None)
    if not compiles_gpu:
        return manifest_recipe(rocm_reqs, [(path, extra) for path, _, extra in extras]) \
            or "pip install . (pure Python: it runs on ROCm PyTorch)"
    if setup is not None and (not any(b.builds_on_rocm for b in cbuilds)
                              or re.search(r"(?i)\bcmake", text_of(setup.path))):
        # (a setup.py that runs CMake itself, as vLLM's does, is still installed with pip)
        return "pip install --no-build-isolation . on ROCm PyTorch"
    if any(PurePosixPath(b.path).name == "CMakeLists.txt" for b in cbuilds):
        option = next((b.rocm_option for b in cbuilds if b.rocm_option), "")
        pyprojects = [f.path for f in mine if PurePosixPath(f.path).name == "pyproject.toml"]
        if any(re.search(r"scikit[-_]build|py[-_]build[-_]cmake", text_of(p)) for p in pyprojects):
            # the Python build backend runs CMake and takes its options from CMAKE_ARGS (llama-cpp-python)
            return f'CMAKE_ARGS="{option}" pip install .' if option else "pip install ."
        recipe = f"cmake -B build {option} && cmake --build build".replace("  ", " ")
        if setup is not None or pyprojects:
            recipe += ", then pip install ."
        return recipe
    if cbuilds:
        return "make (its default configuration builds with hipcc)"
    return ""
