"""The ROCm path of each component (docs/reach-model.md): the patterns found with their evidence, the
artifacts built in each configuration, the install recipe, the confidence, the project macros, and which
configuration compiles each source file."""
from __future__ import annotations


from dataclasses import FrozenInstanceError, dataclass, field, fields
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from auditor.model.rocmpath.wideshuffle import WideShuffleUse
from auditor.types import SourceFile



class RocmPattern(StrEnum):
    """How a project builds or runs on ROCm (docs/reach-model.md). The values are the ids reports and the JSON
    schema show (`P1` .. `P7`)."""

    BACKEND_SWITCH = "P1"
    HIP_SHIM = "P2"
    BUILD_TIME_HIPIFY = "P3"
    ALTERNATIVE_IMPLEMENTATION = "P4"
    PYTHON_DISPATCH = "P5"
    ROCM_PACKAGES = "P6"
    FENCED_FEATURES = "P7"

    @property
    def description(self) -> str:
        return PATTERN_NAMES[self]


PATTERN_NAMES = MappingProxyType({
    RocmPattern.BACKEND_SWITCH: "build-level backend switch",
    RocmPattern.HIP_SHIM: "same sources compiled as HIP through a shim header",
    RocmPattern.BUILD_TIME_HIPIFY: "HIPIFY at build time",
    RocmPattern.ALTERNATIVE_IMPLEMENTATION: "alternative implementation of the same artifact",
    RocmPattern.PYTHON_DISPATCH: "Python dispatch on ROCm",
    RocmPattern.ROCM_PACKAGES: "ROCm extras, requirements or wheels",
    RocmPattern.FENCED_FEATURES: "NVIDIA-only features fenced or opt-in",
})
# A ROCm build of GPU code: any of these verifies the path, and the verdict cites them first.
BUILDS_ON_ROCM = frozenset({RocmPattern.BACKEND_SWITCH, RocmPattern.HIP_SHIM, RocmPattern.BUILD_TIME_HIPIFY,
                            RocmPattern.ALTERNATIVE_IMPLEMENTATION})
# Enough for a project that compiles no GPU code: it runs on ROCm through its Python and its packages.
RUNS_ON_ROCM = frozenset({RocmPattern.PYTHON_DISPATCH, RocmPattern.ROCM_PACKAGES})
# The ROCm build compiles the same sources as the CUDA one (a backend switch or a shim), not other files.
SAME_SOURCES = frozenset({RocmPattern.BACKEND_SWITCH, RocmPattern.HIP_SHIM})


@dataclass(frozen=True, slots=True)
class Evidence:
    pattern: RocmPattern
    where: str            # path:line
    what: str             # one line saying what was seen

    def as_dict(self) -> dict:
        return {"pattern": self.pattern, "name": PATTERN_NAMES[self.pattern], "where": self.where, "what": self.what}


@dataclass(frozen=True, slots=True)
class RocmPath:
    component: str
    evidence: tuple[Evidence, ...] = ()
    verified: bool = False                    # a ROCm build that compiles or loads something
    refusals: tuple[str, ...] = ()            # path:line of ROCm branches that only raise or exit
    rocm_artifacts: tuple[str, ...] = ()
    cuda_artifacts: tuple[str, ...] = ()
    cuda_only_artifacts: tuple[str, ...] = () # built for CUDA, with no ROCm counterpart
    recipe: str = ""
    confidence: str = "low"                   # high: CI builds for ROCm; medium: a build; low: no ROCm build
    ci: tuple[str, ...] = ()                  # CI files that build or test for ROCm
    gpu_sources: int = 0                      # .cu/.cuh/.hip files in the component

    @property
    def patterns(self) -> tuple[RocmPattern, ...]:
        return tuple(sorted({e.pattern for e in self.evidence}))

    def first(self, pattern: RocmPattern) -> Evidence | None:
        return next((e for e in self.evidence if e.pattern == pattern), None)

    def as_dict(self) -> dict:
        return {
            "patterns": list(self.patterns),
            "verified": self.verified,
            "evidence": [e.as_dict() for e in self.evidence],
            "refusals": list(self.refusals),
            "artifacts": {"rocm": list(self.rocm_artifacts), "cuda": list(self.cuda_artifacts),
                          "cuda_only": list(self.cuda_only_artifacts)},
            "install": self.recipe,
            "confidence": self.confidence,
            "ci": list(self.ci),
        }


@dataclass
class ProjectBuild:
    """Everything the build files say, for the whole scanned tree."""

    paths: dict[str, RocmPath] = field(default_factory=dict)       # component -> its ROCm path
    # file -> both|rocm|cuda|opt-in|other-backend|unreferenced
    provenance: dict[str, str] = field(default_factory=dict)
    file_artifact: dict[str, str] = field(default_factory=dict)    # cuda-only file -> why (artifact, build line)
    cuda_build_lines: dict[str, frozenset[int]] = field(default_factory=dict)  # build script -> CUDA-branch lines
    rocm_macros: frozenset[str] = frozenset()
    cuda_macros: frozenset[str] = frozenset()
    optional_macros: frozenset[str] = frozenset()
    shims: frozenset[str] = frozenset()                            # shim headers of a verified HIP build
    rocm_redefinitions: dict[str, dict[str, str]] = field(default_factory=dict)  # component -> CUDA name -> path:line
    fenced: dict[str, str] = field(default_factory=dict)           # file -> the fence (path:line)
    components: dict[str, str] = field(default_factory=dict)       # component -> primary|secondary|optional
    shipped_python: dict[str, frozenset[str]] = field(default_factory=dict)  # component -> package dirs
    own_packages: frozenset[str] = frozenset()                     # top-level import names the project ships
    dependencies: frozenset[str] = frozenset()                     # what the default install requires (normalized)
    cuda_only_artifact_files: dict[str, str] = field(default_factory=dict)  # file -> CUDA-only artifact it builds
    tolerated_artifacts: dict[str, str] = field(default_factory=dict)  # CUDA-only artifact -> guarded import
    optional_builds: dict[str, str] = field(default_factory=dict)  # source -> why its extension's build is optional
    optional_lines: dict[str, frozenset[int]] = field(default_factory=dict)  # file -> lines behind opt-in macros
    # C/C++ file -> the opt-in macros it, or a file including it, tests with #if (auditor/model/rocmpath/optinlibs.py)
    opt_in_tests: dict[str, frozenset[str]] = field(default_factory=dict)
    # C/C++ file -> calls of a shuffle macro that ROCm expands to a width-less legacy `__shfl*`, in kernels
    wide_shuffles: dict[str, tuple[WideShuffleUse, ...]] = field(default_factory=dict)
    python_packages: tuple[tuple[frozenset[str], tuple[SourceFile, ...]], ...] = ()   # per component: packages, files
    unread_requirements: frozenset[str] = frozenset()   # requirement files and release variants pip never reads
    # C/C++ file -> the secondary or optional component whose sources alone include it (rocmpath/includedby.py)
    included_by_parts: dict[str, str] = field(default_factory=dict)
    entry_modules: frozenset[str] = frozenset()         # modules the entry points run (rocmpath/entrypoints.py)
    jit_built: dict[str, str] = field(default_factory=dict)    # source -> the load() importing the package runs
    required_builds: dict[str, str] = field(default_factory=dict)  # source -> why a side setup script is needed
    required_parts: dict[str, str] = field(default_factory=dict)   # nested distribution -> why the package needs it
    unrun_scripts: frozenset[str] = frozenset()         # shell scripts pip's build never runs (rocmpath/devscripts.py)
    vendor_backends: frozenset[str] = frozenset()                  # `nvidia/` beside `amd/`, cuda.txt beside rocm.txt
    collection: bool = False                                       # a collection of independent programs
    # CUDA version macros a shim-only HIP build leaves undefined (its `#if CUDART_VERSION >= …` branches are CUDA's)
    undefined_on_rocm: frozenset[str] = frozenset()
    # components whose ROCm build runs HIPIFY on the CUDA sources (an explicit hipify call, or a CUDAExtension that
    # ROCm PyTorch hipifies), with no CMake/Make HIP build beside it: `__CUDACC__` becomes `__HIPCC__` there
    hipified: frozenset[str] = frozenset()
    unread: dict[str, str] = field(default_factory=dict)           # build file -> why the pre-pass did not read it all

    def skipped_by_default(self, path: str) -> bool:
        """A source the default ROCm install does not compile whatever its ROCm path: no build lists it, another
        vendor's or an opt-in build does, its extension is one the install goes on without, or only another
        component's sources include it."""
        if path in self.required_builds:   # a package that imports its extension without a fallback needs it
            return False
        return self.provenance.get(path) in ("unreferenced", "other-backend", "opt-in") \
            or path in self.optional_builds or path in self.included_by_parts

    def cuda_only_extensions(self) -> frozenset[str]:
        """The extension modules (dotted import names) only the CUDA configuration of a build script builds."""
        return frozenset(a for rocm in self.paths.values() for a in rocm.cuda_only_artifacts)

    def sealed(self) -> "ProjectBuild":
        """This model as a run keeps it once the build pre-pass has read it (auditor/run/pipeline/context.py): no field
        can be set and no mapping changed; the analysis computes from it (dispositions), never writes into it."""
        values: dict[str, Any] = {f.name: _read_only(getattr(self, f.name)) for f in fields(self)}
        copy = ProjectBuild(**values)
        object.__setattr__(copy, "_sealed", True)
        return copy

    def __setattr__(self, name: str, value: object) -> None:
        if getattr(self, "_sealed", False):
            raise FrozenInstanceError(f"cannot assign to field {name!r}: the project build model is sealed")
        object.__setattr__(self, name, value)


def _read_only(value: object) -> object:
    if isinstance(value, dict):
        return MappingProxyType({key: _read_only(item) for key, item in value.items()})
    return value
