"""The typed rule format: one frozen dataclass per matcher kind, with its own defaults, read and validated once
from a rule file's table. Engines read these fields; nothing reads a rule's TOML keys after loading."""
from __future__ import annotations

import re
from dataclasses import dataclass, fields
from typing import Any, ClassVar, Union

from auditor.truth.switches import SwitchError, check_switches
from auditor.util.errors import ToolError


class RuleError(ToolError, ValueError):
    """A rule file is malformed; the message names the file and the rule."""


Strings = tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DependencyMatch:
    """A package a project declares (`pypi`, `local_version`, `index_url`) or imports (`imports`)."""

    family: ClassVar[str] = "dependency"
    primary: ClassVar[frozenset[str]] = frozenset({"pypi", "imports", "local_version", "index_url"})
    pypi: Strings = ()                 # distribution name globs
    imports: Strings = ()              # module paths (a parent covers its submodules)
    local_version: str | None = None   # regex on a requirement's local version label (+cu121)
    index_url: str | None = None       # regex on an index or wheel URL
    extras: Strings = ()               # narrows pypi: only with one of these extras (globs)
    versions: str | None = None        # narrows pypi: the pinned upper version is in this specifier set
    declared_in: str | None = None     # narrows: regex on where the requirement was declared
    overrides: Strings = ()            # ids of rules this one replaces where both claim the same package


@dataclass(frozen=True, slots=True)
class PythonMatch:
    """A qualified name, a call or a string literal in Python code."""

    family: ClassVar[str] = "python"
    primary: ClassVar[frozenset[str]] = frozenset({"calls", "names", "strings"})
    calls: Strings = ()
    names: Strings = ()
    strings: str | None = None         # regex on a string literal's value
    contexts: Strings = ()             # only in these syntactic contexts (PYTHON_CONTEXTS); () = any
    keywords: Strings = ()             # a call only with one of these keyword arguments
    unless_argument: Strings = ()      # not a call hit when its first argument is written as one of these
    in_calls: Strings = ()             # only inside a call of one of these
    files: Strings = ()                # only in files whose name matches one of these globs
    needles: Strings = ()              # hand-written prefilter words (replace the derived ones)
    callers: bool = False              # also report the calls of the function whose body matched
    integration: str | None = None     # the package whose API this is: optional where the project does not need it
    capability: bool = False           # the name is a GPU's compute capability: reported where it decides


@dataclass(frozen=True, slots=True)
class CudaMatch:
    """An include, identifier, inline-asm instruction, tree-sitter query or HIPIFY status in C/C++/CUDA."""

    family: ClassVar[str] = "cuda"
    primary: ClassVar[frozenset[str]] = frozenset({"includes", "identifiers", "asm", "query", "hipify_status"})
    includes: Strings = ()
    identifiers: Strings = ()
    asm: str | None = None             # regex on an asm template
    query: str | None = None           # tree-sitter query capturing @hit
    hipify_status: str | None = None   # names from the HIPIFY API table with this status
    files: Strings = ("cuda", "cpp")
    unless_asm: str | None = None
    hipify_names: Strings = ()
    hipify_apis: Strings = ()
    in_functions: Strings = ()
    not_subscript: str | None = None
    kernel_needs: str | None = None    # regex: a hit in a __global__ kernel whose text lacks it is not one
    rocm_twin: str | None = None       # regex of ROCm switches: a directive handled beside one is not a hit
    capability: bool = False           # a hit comparing a capability is evaluated on the persona's AMD GPUs
    sync_mask: bool = False            # a variable's initial value counts only when the variable is a *_sync mask


@dataclass(frozen=True, slots=True)
class TextMatch:
    """A line of a build, container, CI, shell, Kubernetes, Bazel, conda or Cython file."""

    family: ClassVar[str] = "text"
    primary: ClassVar[frozenset[str]] = frozenset({"lines"})
    lines: str = ""                    # regex on one code line (comments blanked)
    files: Strings = ()                # file kinds (TEXT_KINDS)
    guarded_by: str | None = None      # regex: a file that also matches this has the ROCm counterpart
    unless_call: str | None = None     # regex: not a hit inside a command (`name(` to its `)`) that matches it


@dataclass(frozen=True, slots=True)
class ExtensionMatch:
    """A Python call of an op a C++ extension registers (pybind11 `m.def`, `TORCH_LIBRARY`) whose translation
    unit has a finding of one of these categories (auditor/match/xlang): no engine runs it, the report's link does."""

    family: ClassVar[str] = "extension"
    primary: ClassVar[frozenset[str]] = frozenset({"implemented_with"})
    implemented_with: Strings = ()     # categories of the C/C++ findings that make an op CUDA-only
    library_severity: str = "medium"   # at least this severity (a library HIPIFY maps, NVTX, is not a reroute)


@dataclass(frozen=True, slots=True)
class ImportChainMatch:
    """A Python import of one of the project's own modules that cannot be imported on ROCm: one whose module-level
    code has a finding of one of these categories (auditor/match/xlang/importchain.py): no engine runs it, the link
    does."""

    family: ClassVar[str] = "importchain"
    primary: ClassVar[frozenset[str]] = frozenset({"fails_with"})
    fails_with: Strings = ()           # categories of the module-level findings that make an import fail
    root_severity: str = "high"        # at least this severity


@dataclass(frozen=True, slots=True)
class OwnExtensionMatch:
    """A Python import of one of the project's own extension modules that only these build configurations of its
    build script build (auditor/match/xlang/ownextension.py): no engine runs it, the link does."""

    family: ClassVar[str] = "ownextension"
    primary: ClassVar[frozenset[str]] = frozenset({"built_only_for"})
    built_only_for: Strings = ()       # configurations: "cuda" (an extension the ROCm configuration leaves out)


Match = Union[DependencyMatch, PythonMatch, CudaMatch, TextMatch, ExtensionMatch, ImportChainMatch, OwnExtensionMatch]
MatchType = (type[DependencyMatch] | type[PythonMatch] | type[CudaMatch] | type[TextMatch] | type[ExtensionMatch]
             | type[ImportChainMatch] | type[OwnExtensionMatch])
MATCH_TYPES: dict[str, MatchType] = {t.family: t for t in (DependencyMatch, PythonMatch, CudaMatch, TextMatch,
                                                            ExtensionMatch, ImportChainMatch, OwnExtensionMatch)}
BUILD_CONFIGURATIONS = frozenset({"cuda"})   # what OwnExtensionMatch.built_only_for names
PYTHON_CONTEXTS = {"compare", "argument", "attribute", "call", "test", "format", "log", "member", "other"}
TEXT_KINDS = {"build", "container", "ci", "shell", "k8s", "bazel", "conda", "cython"}
HIPIFY_STATUSES = {"unsupported"}   # what HIPIFY cannot translate; the API table says which names
REGEX_FIELDS = ("lines", "guarded_by", "asm", "unless_asm", "strings", "local_version", "index_url", "declared_in",
                "not_subscript", "kernel_needs", "rocm_twin")


def field_names(kind: type) -> frozenset[str]:
    return frozenset(f.name for f in fields(kind))


def match_family(keys: set[str], where: str) -> MatchType:
    """The one matcher kind whose primary keys these are; unknown keys are an error."""
    kinds = [kind for kind in MATCH_TYPES.values() if keys & kind.primary]
    if len(kinds) != 1:
        raise RuleError(f"{where}: needs exactly one matcher family, found {[k.family for k in kinds] or 'none'}")
    kind = kinds[0]
    unknown = keys - field_names(kind)
    if unknown:
        raise RuleError(f"{where}: unknown field(s) {sorted(unknown)} for a {kind.family} rule")
    return kind


def _coerce(kind: type, name: str, value: object, where: str) -> Any:
    default = next(f.default for f in fields(kind) if f.name == name)
    if isinstance(default, tuple):
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise RuleError(f"{where}: {name} is a list of non-empty strings")
        return tuple(value)
    if isinstance(default, bool):
        if not isinstance(value, bool):
            raise RuleError(f"{where}: {name} is true or false")
        return value
    if not isinstance(value, str):
        raise RuleError(f"{where}: {name} is a string")
    return value


def parse_match(raw: dict, where: str, check_regexes: bool = True) -> Match:
    """The typed matcher of a rule's matcher keys (`raw` holds only those)."""
    kind = match_family(set(raw), where)
    values = {name: _coerce(kind, name, value, where) for name, value in raw.items()}
    match = kind(**values)
    validate(match, where, check_regexes)
    return match


def validate(match: Match, where: str, check_regexes: bool = True) -> None:
    for name in REGEX_FIELDS:
        value = getattr(match, name, None)
        if value is not None and check_regexes:
            try:
                re.compile(value)
            except re.error as err:
                raise RuleError(f"{where}: {name} is not a valid regex: {err}") from None
    if isinstance(match, PythonMatch):
        if not set(match.contexts) <= PYTHON_CONTEXTS:
            raise RuleError(f"{where}: contexts must be among {sorted(PYTHON_CONTEXTS)}")
        if match.strings is not None and (match.calls or match.names):
            raise RuleError(f"{where}: a python rule matches strings, or calls/names, not both")
    elif isinstance(match, TextMatch):
        if not match.files or not set(match.files) <= TEXT_KINDS or not match.lines:
            raise RuleError(f"{where}: a text rule needs lines and files = a subset of {sorted(TEXT_KINDS)}")
    elif isinstance(match, CudaMatch):
        _validate_cuda(match, where)
    elif isinstance(match, (ExtensionMatch, ImportChainMatch)):
        _validate_link(match, where)
    elif isinstance(match, OwnExtensionMatch):
        if not match.built_only_for or not set(match.built_only_for) <= BUILD_CONFIGURATIONS:
            raise RuleError(f"{where}: built_only_for is a list of build configurations {sorted(BUILD_CONFIGURATIONS)}")
    elif match.versions is not None:
        from packaging.specifiers import InvalidSpecifier, SpecifierSet

        try:
            SpecifierSet(match.versions)
        except InvalidSpecifier as err:
            raise RuleError(f"{where}: versions: {err}") from None


def _validate_cuda(match: CudaMatch, where: str) -> None:
    if match.hipify_status is None and (match.hipify_names or match.hipify_apis):
        raise RuleError(f"{where}: hipify_names and hipify_apis narrow a hipify_status rule")
    if match.hipify_status is not None:
        if match.hipify_status not in HIPIFY_STATUSES:
            raise RuleError(f"{where}: hipify_status must be one of {sorted(HIPIFY_STATUSES)}")
        if match.includes or match.identifiers or match.asm is not None or match.query is not None:
            raise RuleError(f"{where}: a hipify_status rule takes its names from the API table, not identifiers/query")
    if match.not_subscript is not None and match.query is None:
        raise RuleError(f"{where}: not_subscript narrows a query: a regex on the text of a hit that is an array index")
    if match.kernel_needs is not None and match.query is None:
        raise RuleError(f"{where}: kernel_needs narrows a query: a regex its hit's __global__ kernel must match")
    if match.rocm_twin is not None and match.query is None:
        raise RuleError(f"{where}: rocm_twin narrows a query on preprocessor directives: a regex of ROCm switches")
    if match.capability and match.query is None:
        raise RuleError(f"{where}: capability narrows a query: its comparisons are evaluated on the AMD GPUs")
    if match.sync_mask and match.query is None:
        raise RuleError(f"{where}: sync_mask narrows a query: a variable's value counts where it is a *_sync mask")
    if match.in_functions and match.query is None:
        raise RuleError(f"{where}: in_functions narrows a query: a list of function specifiers such as __global__")
    if not match.files or not set(match.files) <= {"cuda", "cpp"}:
        raise RuleError(f"{where}: files of a cuda rule are 'cuda' and/or 'cpp'")


def as_dict(match: Match) -> dict:
    """The fields that differ from their defaults, as a rule file would write them (for digests and caches)."""
    out: dict = {}
    for f in fields(match):
        value = getattr(match, f.name)
        if value != f.default:
            out[f.name] = list(value) if isinstance(value, tuple) else value
    return out


def from_dict(family: str, data: dict, where: str = "cached rule") -> Match:
    """A matcher as_dict gave (the rulebook cache): types checked, not validated again (it was, when stored;
    validating imports `packaging`, which a cached start-up does without)."""
    kind = MATCH_TYPES.get(family)
    if kind is None:
        raise RuleError(f"{where}: unknown matcher family {family!r}")
    unknown = set(data) - field_names(kind)
    if unknown:
        raise RuleError(f"{where}: unknown field(s) {sorted(unknown)}")
    return kind(**{name: _coerce(kind, name, value, where) for name, value in data.items()})


def validate_guards(data: dict[str, Any], label: str) -> None:
    """RuleError naming the section and key when guards.toml has a key no reader reads or a value of the wrong type
    (the keys and their types: auditor/truth/switches.py)."""
    try:
        check_switches(data, label)
    except SwitchError as err:
        raise RuleError(str(err)) from None


def _validate_link(match: ExtensionMatch | ImportChainMatch, where: str) -> None:
    """A cross-file link's categories and severity threshold."""
    from auditor.types import CATEGORIES, Severity

    name, categories, level, severity = (
        ("implemented_with", match.implemented_with, "library_severity", match.library_severity)
        if isinstance(match, ExtensionMatch) else
        ("fails_with", match.fails_with, "root_severity", match.root_severity))
    if not categories or not set(categories) <= set(CATEGORIES):
        raise RuleError(f"{where}: {name} is a list of finding categories {list(CATEGORIES)}")
    try:
        Severity.parse(severity)
    except ValueError as err:
        raise RuleError(f"{where}: {level}: {err}") from None
