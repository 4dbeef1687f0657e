"""Every fact the reach model knows about a line, with the layer it answers and what it means: the one list the
model's readers produce and the judge's table (auditor/judge/table.py) reads. docs/reach-model.md lists them."""
from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType


class Layer(StrEnum):
    """The questions the model answers about a line, in the order a default ROCm install meets them."""

    SHIPPED = "shipped"        # the default install ships (or reads) the file
    BUILT = "built"            # the ROCm build compiles it
    IMPORTED = "imported"      # importing the shipped package loads it
    CALLED = "called"          # code the default install runs calls it
    TAKEN = "taken"            # the branch that holds the line is taken on ROCm
    MAPPED = "mapped"          # the ROCm build sees a ROCm name here (a shim, a redefinition, HIPIFY)


@dataclass(frozen=True, slots=True)
class Fact:
    layer: Layer
    meaning: str


FACTS = MappingProxyType({
    # from the scan of the file (the engines' guards and optional imports)
    "guard": Fact(Layer.TAKEN, "a test the scan reads as false on ROCm guards the line"),
    "project-macro": Fact(Layer.TAKEN, "a project macro the ROCm build leaves undefined guards the line"),
    "optional-import": Fact(Layer.IMPORTED, "a declared extra, or an import behind a fallback"),
    "unrequired-integration": Fact(Layer.IMPORTED, "the API of a package the default install does not require"),
    # where the file sits in the tree and its packaging
    "ops-path": Fact(Layer.SHIPPED, "CI, a container or a developer script"),
    "vendor-backend": Fact(Layer.BUILT, "another vendor's backend directory beside the ROCm one"),
    "separate-distribution": Fact(Layer.SHIPPED, "a nested distribution the root install does not pull in"),
    "required-part": Fact(Layer.SHIPPED, "a nested distribution the shipped package imports without a fallback"),
    "optional-part": Fact(Layer.SHIPPED, "a component in an optional directory"),
    "optional-dir": Fact(Layer.SHIPPED, "an optional directory (tests, examples, benchmarks)"),
    "never-imported": Fact(Layer.IMPORTED, "a shipped module `import` of the package never loads"),
    "unread-requirements": Fact(Layer.SHIPPED, "a requirement set or release variant the install does not read"),
    "not-packaged": Fact(Layer.SHIPPED, "Python outside the shipped packages"),
    "unrun-script": Fact(Layer.SHIPPED, "a shell script pip's build never runs (a developer's script)"),
    # the build files read for ROCm
    "cuda-build-branch": Fact(Layer.TAKEN, "a line only the CUDA configuration of a build script runs"),
    "opt-in-line": Fact(Layer.TAKEN, "behind an opt-in the default build or install leaves off"),
    "fenced": Fact(Layer.BUILT, "an op its builder fences off on ROCm"),
    "optional-build": Fact(Layer.BUILT, "an extension whose build the install tolerates failing, with a fallback"),
    "not-called": Fact(Layer.CALLED, "a function no code the default install runs calls"),
    "tolerated-artifact": Fact(Layer.IMPORTED, "a CUDA-only artifact whose imports tolerate its absence"),
    "no-rocm-counterpart": Fact(Layer.BUILT, "only the CUDA build compiles it, for an artifact ROCm lacks"),
    "rocm-alternative": Fact(Layer.BUILT, "only the CUDA build compiles it; the ROCm build compiles other sources"),
    "other-backend-source": Fact(Layer.BUILT, "only another vendor's backend compiles it"),
    "opt-in-op": Fact(Layer.BUILT, "an op the ROCm path compiles on first use"),
    "no-gpu-build": Fact(Layer.BUILT, "the component's default ROCm build compiles no GPU source"),
    "unreferenced": Fact(Layer.BUILT, "no build configuration lists or includes it"),
    "jit-built": Fact(Layer.BUILT, "built (and hipified) by a load() that importing the shipped package runs"),
    "required-build": Fact(Layer.BUILT, "built by a second setup script that shipped code needs (an unguarded import)"),
    "rocm-path-verified": Fact(Layer.BUILT, "its component has a verified ROCm path"),
    "rocm-built": Fact(Layer.BUILT, "the verified ROCm build compiles it"),
    "rocm-build-file": Fact(Layer.BUILT, "a build file of a component with a verified ROCm path"),
    "rocm-runs": Fact(Layer.SHIPPED, "Python of a component with a verified ROCm path"),
    # names the ROCm build maps
    "hipified-component": Fact(Layer.MAPPED, "the component's ROCm build runs HIPIFY on its CUDA sources"),
    "hipify-kept": Fact(Layer.MAPPED, "the line tests a macro HIPIFY leaves as it is"),
    "shim-header": Fact(Layer.MAPPED, "the shim header that maps CUDA names for the HIP build"),
    "redefined-name": Fact(Layer.MAPPED, "the line uses a name the project redefines for the ROCm build"),
    "written-for-rocm": Fact(Layer.MAPPED, "a file written for ROCm (`.hip`, a `rocm/` or `hip/` directory)"),
    "cuda-only-switch": Fact(Layer.TAKEN, "the line tests a macro only the CUDA build defines"),
})
