"""The one registry of input kinds: for each kind of file rocm-audit reads, how its path is recognised, the
engine that scans it and what that scan reads of the run's facts. Discovery, the scan, the result cache, the
ROCm-path readers, `fix` and the HTML report read these records; adding a kind is one record here (and its engine,
and rules whose `files` name it: docs/architecture.md, "How to add")."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

from auditor.match.inputs.code import CudaEngine, CythonEngine, NotebookEngine, PythonEngine
from auditor.match.inputs.engine import Engine
from auditor.match.inputs.textual import CondaEngine, ManifestEngine, TextEngine, YamlEngine
from auditor.parse.manifest import manifest_flavour

# What a file's scan reads of the preprocessor facts (the rulebook's `preprocessor` guards, with the project's
# macros): "none"; "text", only about names its decoded text contains (line_states over that text, see
# PreprocFacts.within); "embedded", all of them when the file may embed CUDA code (a Python call of
# EMBEDDED_CUDA_CALLS or a CUDA source string, found by the same needles as the Python engine's gate), else none;
# "all" (a notebook's cells and Cython's C are code derived from the text, not the text itself).
PreprocessorRead = Literal["none", "text", "embedded", "all"]
# Where a file's comments are, for its inline suppressions (auditor/match/suppress.py): Python's tokens, C's comments
# as the compiler reads them, a `#` outside quotes to the end of the line, or nowhere (a notebook's JSON).
CommentSyntax = Literal["python", "c", "hash", "none"]
FixLane = Literal["cuda", "python", "text"]

# Every name GCC, clang and nvcc compile as C, C++ or CUDA (`gcc -x`'s table, C++20 module units, preprocessed
# output), and the headers, inline parts and X-macro lists projects #include; a configure template (`k.cu.in`)
# is its output's kind. A file a scanned file #includes is read whatever its name (auditor/run/discover/included.py).
CUDA_SUFFIXES = frozenset({".cu", ".cuh", ".cuinc", ".cui"})
CPP_SUFFIXES = frozenset({".c", ".cc", ".cp", ".cpp", ".cxx", ".c++", ".h", ".hpp", ".hh", ".hp", ".hxx", ".h++",
                          ".inl", ".inc", ".ipp", ".tpp", ".tcc", ".txx", ".icc", ".def", ".i", ".ii",
                          ".ixx", ".cppm", ".ccm", ".cxxm", ".c++m"})
TEMPLATE_SUFFIX = ".in"
CYTHON_SUFFIXES = frozenset({".pyx", ".pxd", ".pxi"})
BAZEL_NAMES = frozenset({"BUILD", "BUILD.bazel", "WORKSPACE", "WORKSPACE.bazel", "MODULE.bazel", ".bazelrc"})
CONDA_RECIPE_NAMES = frozenset({"meta.yaml", "meta.yml", "recipe.yaml"})   # conda-build and rattler-build recipes
MAKEFILE_NAMES = frozenset({"Makefile", "GNUmakefile", "makefile"})
YAML_SUFFIXES = (".yml", ".yaml")
# `dockerfile-layers.png`, `Dockerfile.md`: pictures and notes about a Dockerfile are not one.
NOT_CONTAINER_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp", ".ico", ".pdf", ".md", ".rst",
                                    ".html", ".txt", ".json", ".lock"})


@dataclass(frozen=True, slots=True)
class PathView:
    """A relative path as the kinds' tests read it, split once."""

    relative: str
    parts: tuple[str, ...]
    name: str
    lower: str        # the name in lower case
    suffix: str       # in lower case
    code_suffix: str  # the suffix of the file a configure template (`x.cu.in`) makes, else `suffix`

    @classmethod
    def of(cls, relative: str) -> PathView:
        path = PurePosixPath(relative)
        suffix = path.suffix.lower()
        code_suffix = PurePosixPath(path.stem).suffix.lower() if suffix == TEMPLATE_SUFFIX else suffix
        return cls(relative, path.parts, path.name, path.name.lower(), suffix, code_suffix)


@dataclass(frozen=True, slots=True)
class InputKind:
    name: str
    engine: Engine
    claims: Callable[[PathView], bool] | None    # None: no path names this kind (a refinement's result)
    preprocessor_read: PreprocessorRead = "none"
    refine: Callable[[Path], str | None] | None = None   # the kind once the file is read (bounded); None: drop it
    c_family: bool = False          # a C/C++ translation unit or header: kernels, macros, the preprocessor
    python_code: bool = False       # Python source (a notebook's cells too)
    build_input: bool = False       # may hold how the project builds (build switches, the debug-switch reader)
    fix_lane: FixLane | None = None     # which of `fix`'s editors may change it
    lexer: str | None = None        # the HTML report's highlighter for its code excerpts
    ops: bool = False               # the repository's operations (CI, containers), not the code it ships
    text_rules: bool = False        # text rules may name it in `files` (rulebook.schema.TEXT_KINDS, tested equal)
    coding_declaration: bool = False    # its language decodes it as a PEP 263 coding line says (scan.file.decode)
    comments: CommentSyntax = "hash"


def _is_build(p: PathView) -> bool:
    return p.name == "CMakeLists.txt" or p.suffix == ".cmake" or p.name in MAKEFILE_NAMES or p.suffix == ".mk"


def _is_container(p: PathView) -> bool:
    lower = p.lower
    return (lower.startswith("dockerfile") and p.suffix not in NOT_CONTAINER_SUFFIXES) \
        or lower.endswith((".dockerfile", ".containerfile")) or lower.startswith("containerfile") \
        or (lower.startswith(("docker-compose", "compose")) and p.suffix in YAML_SUFFIXES)


def _is_ci(p: PathView) -> bool:
    parts = p.parts
    return (len(parts) >= 3 and parts[-3] == ".github" and parts[-2] == "workflows" and p.suffix in YAML_SUFFIXES) \
        or p.lower == ".gitlab-ci.yml" \
        or (p.suffix in YAML_SUFFIXES and any(d in (".buildkite", ".circleci") for d in parts[:-1]))


def _yaml_kind(path: Path) -> str | None:
    from auditor.match.inputs.yamlkind import yaml_kind

    return yaml_kind(path)


# In order: the first kind whose test claims a path is its kind.
KINDS: tuple[InputKind, ...] = (
    InputKind("cuda", CudaEngine("cuda"), lambda p: p.code_suffix in CUDA_SUFFIXES, "text", c_family=True,
              fix_lane="cuda", lexer="cuda", comments="c"),
    InputKind("cpp", CudaEngine("cpp"), lambda p: p.code_suffix in CPP_SUFFIXES, "text", c_family=True,
              fix_lane="cuda", lexer="cpp", comments="c"),
    InputKind("python", PythonEngine(), lambda p: p.suffix in (".py", ".pyi"), "embedded", python_code=True,
              fix_lane="python", lexer="python", coding_declaration=True, comments="python"),
    InputKind("notebook", NotebookEngine(), lambda p: p.suffix == ".ipynb", "all", python_code=True,
              comments="none"),
    InputKind("cython", CythonEngine(), lambda p: p.suffix in CYTHON_SUFFIXES, "all", lexer="cython",
              text_rules=True, coding_declaration=True, comments="python"),
    InputKind("bazel", TextEngine("bazel"), lambda p: p.name in BAZEL_NAMES or p.suffix == ".bzl",
              build_input=True, lexer="python", text_rules=True, comments="python"),
    InputKind("conda", CondaEngine(), lambda p: p.name in CONDA_RECIPE_NAMES, build_input=True, lexer="yaml",
              text_rules=True),
    InputKind("manifest", ManifestEngine(lambda relative: classify(relative) == "manifest"),
              lambda p: manifest_flavour(p.relative) is not None, build_input=True, fix_lane="text"),
    InputKind("build", TextEngine("build"), _is_build, build_input=True, fix_lane="text", lexer="cmake",
              text_rules=True),
    InputKind("container", TextEngine("container"), _is_container, build_input=True, fix_lane="text",
              lexer="docker", ops=True, text_rules=True),
    InputKind("ci", TextEngine("ci"), _is_ci, build_input=True, fix_lane="text", lexer="yaml", ops=True,
              text_rules=True),
    InputKind("shell", TextEngine("shell"), lambda p: p.suffix in (".sh", ".bash"), build_input=True,
              fix_lane="text", lexer="bash", text_rules=True),
    # a candidate: discovery keeps only Kubernetes and Helm files (auditor/match/inputs/yamlkind.py)
    InputKind("yaml", YamlEngine(), lambda p: p.suffix in YAML_SUFFIXES, refine=_yaml_kind),
    InputKind("k8s", TextEngine("k8s"), None, lexer="yaml", text_rules=True),
)
BY_NAME = {k.name: k for k in KINDS}
C_FAMILY = tuple(k.name for k in KINDS if k.c_family)
PYTHON_CODE = tuple(k.name for k in KINDS if k.python_code)
BUILD_INPUTS = tuple(k.name for k in KINDS if k.build_input)
OPS_KINDS = tuple(k.name for k in KINDS if k.ops)


def input_kind(name: str) -> InputKind:
    return BY_NAME[name]


def kinds_in_lane(lane: FixLane) -> frozenset[str]:
    return frozenset(k.name for k in KINDS if k.fix_lane == lane)


def classify(relative: str) -> str | None:
    """The kind of a file from its path, or None when rocm-audit does not read it."""
    view = PathView.of(relative)
    for kind in KINDS:
        if kind.claims is not None and kind.claims(view):
            return kind.name
    return None


def refine(kind: str | None, path: Path) -> str | None:
    """The kind of a file once its path is not enough: a YAML file is read (bounded) to tell a manifest."""
    if kind is None:
        return None
    refinement = BY_NAME[kind].refine
    return refinement(path) if refinement is not None else kind
