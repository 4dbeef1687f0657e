"""Central data types. Frozen and slotted; no logic beyond small properties."""
from __future__ import annotations

import enum
import hashlib
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from auditor.match.rulebook.schema import CudaMatch, DependencyMatch, Match, PythonMatch, TextMatch


class Severity(enum.IntEnum):
    """Ordered so that `--fail-on` is one comparison."""

    INFO = 0
    LOW = 1
    MEDIUM = 2
    HIGH = 3
    CRITICAL = 4

    @classmethod
    def parse(cls, text: str) -> "Severity":
        try:
            return cls[text.strip().upper()]
        except KeyError:
            names = ", ".join(s.label for s in cls)
            raise ValueError(f"unknown severity {text!r} (expected one of {names})") from None

    @property
    def label(self) -> str:
        return self.name.lower()


CATEGORIES = (
    "cuda_only_python_package",
    "cuda_only_library",
    "ptx_inline_asm",
    "hopper_only_feature",
    "warp_size_assumption",
    "runtime_check",
    "build_system",
    "container",
    "texture_or_surface",
    "cooperative_groups",
    "driver_api",
    "unsupported_api",
    "other",
)

EFFORT_CLASSES = ("S", "M", "L", "XL")

@dataclass(frozen=True, slots=True, order=True)
class Span:
    """1-based line and column; `end_line` inclusive. Line None means the whole file."""

    line: int | None = None
    column: int | None = None
    end_line: int | None = None


@dataclass(frozen=True, slots=True, eq=False)  # identity hash: rules are loaded once per process
class Rule:
    id: str
    name: str
    category: str
    severity: Severity
    message: str
    rocm_alternative: str | None
    effort: str
    docs: str
    spec: Match                      # the typed matcher (auditor/match/rulebook/schema.py): what the rule looks for
    flag: tuple  # of rulebook.Example
    ok: tuple
    example_kind: str                # the file kind the examples are written in
    source_file: str = ""
    traits: frozenset[str] = frozenset()   # names from auditor/match/rulebook/traits.TRAITS

    @property
    def matcher(self) -> str:
        """dependency | python | cuda | text"""
        return self.spec.family

    # The spec typed as its family's matcher: each engine reads only the rules of its own family (the rulebook
    # hands them out by `family()`), so these narrow without a check on the hot path.
    @property
    def cuda(self) -> CudaMatch:
        return cast("CudaMatch", self.spec)

    @property
    def python(self) -> PythonMatch:
        return cast("PythonMatch", self.spec)

    @property
    def dependency(self) -> DependencyMatch:
        return cast("DependencyMatch", self.spec)

    @property
    def text(self) -> TextMatch:
        return cast("TextMatch", self.spec)


def fingerprint(rule_id: str, path: str, subject: str) -> str:
    """The identity of a finding across edits (docs/gate.md): rule, path and the matched subject with
    its whitespace collapsed, never the line, so moving code keeps it; 16 hex digits of BLAKE2b."""
    key = f"{rule_id}\0{path}\0{' '.join(subject.split())}"
    return hashlib.blake2b(key.encode(), digest_size=8).hexdigest()


LIVE = "live"                        # the dispositions the gate weighs (auditor/judge/dispositions.py has all)
VERIFY = "verify on hardware"
PROJECT_MACRO = "guarded by a project macro"   # the scan sets it on a guarded finding (auditor/run/scan/file.py)


@dataclass(frozen=True, slots=True)
class Finding:
    """One place that needs attention before the code runs on ROCm."""

    rule_id: str
    path: str                        # relative to the scanned root, posix
    span: Span
    subject: str                     # normalised matched thing: package, API, mnemonic, image
    snippet: str
    message: str
    severity: Severity
    guarded: bool = False
    optional: bool = False           # declared as an optional extra or in an optional part of the tree
    detail: str = ""                 # per-site addition to the rule message
    disposition: str = "live"        # where the finding sits against the ROCm path (auditor/model/rocmpath); only
                                     # "live" findings decide the verdict
    disposition_note: str = ""       # why, e.g. "setup.py:42 builds the CK backend instead"
    # The report row: what every renderer shows, filled in once by the analysis (judge/analysis/assemble.py) and the
    # gate (auditor/run/gate/change.py); an engine leaves these at their defaults.
    hours: tuple[float, float] = (0.0, 0.0)   # this site's share of the effort, engineer-hours (low, high)
    in_optional_dir: bool = False    # under a directory the effort model treats as optional (tests/, examples/)
    component: str = "."             # the deepest component holding the file
    group: int = -1                  # index into Report.groups
    new: bool | None = None          # against the gate's baseline or git base; None when no gate is in use

    @property
    def fingerprint(self) -> str:
        """Unchanged when code only moves: no line number in it."""
        return fingerprint(self.rule_id, self.path, self.subject)

    @property
    def counted_optional(self) -> bool:
        """Optional as the reports show it: declared optional, or in an optional part of the tree."""
        return self.optional or self.in_optional_dir

    def would_break(self, with_verify: bool = False) -> bool:
        """The one definition of "would break on ROCm" that the verdict's work, the exit code, the gate and every
        renderer share: the finding is live against the ROCm path (and, with `--fail-on-verify`, also one to
        verify on hardware). Every other disposition has a ROCm path or is not on it, and is counted under its
        own name."""
        return self.disposition == LIVE or (with_verify and self.disposition == VERIFY)

    def sort_key(self) -> tuple:
        return (self.path, self.span.line or 0, self.span.column or 0, self.rule_id, self.subject)


@dataclass(frozen=True, slots=True)
class SourceFile:
    path: str                        # relative, posix
    abspath: str
    kind: str                        # python notebook cuda cpp manifest build container ci shell


@dataclass(frozen=True, slots=True)
class FileCoverage:
    """The CUDA references of one file, counted as HIPIFY does (docs/hipify.md)."""

    converted: int = 0
    clean: int = 0                                   # converted, with no HIPIFY-silent hazard in the same function
    unconverted: tuple[tuple[str, int], ...] = ()    # (name, line) of each unconverted reference
    disagreements: tuple[tuple[str, bool, int], ...] = ()  # (name, HIPIFY converts it, references) where
                                                           # PyTorch's hipify does the opposite
    targets: tuple[tuple[str, int], ...] = ()        # (ROCm library a converted reference needs, references)

    @property
    def total(self) -> int:
        return self.converted + len(self.unconverted)


@dataclass(frozen=True, slots=True)
class FileFacts:
    """What scanning a file learned beside its findings, for the report-level analysis."""

    lines: int = 0
    defines_kernels: bool = False     # CUDA/C++ with `__global__`: what validation on AMD hardware is counted by
    cpp_extension: bool = False       # Python building with torch.utils.cpp_extension (PyTorch's hipify translates)
    rocm_build: bool = False          # a build file that mentions a ROCm/HIP build
    partial_reason: str = ""          # why the file was scanned only in part ("" when it was not)
    unknown_suppressions: tuple[tuple[int, str], ...] = ()   # (line, rule id) of suppressions naming no rule
    imports: tuple[str, ...] = ()     # Python: the modules importing this one loads unconditionally (pyimports.py)
    opt_in_lines: tuple[int, ...] = ()   # Python: lines behind an environment opt-in off by default (envoptin.py)
    import_time: tuple[tuple[int, int], ...] | None = None   # Python: lines run at import, as runs (None: not parsed)
    exports: tuple[tuple[str, str, str, int], ...] = ()   # C/C++, for xlang: ops (module, op, function, line)
    fenced_exports: tuple[int, ...] = ()   # lines of those registrations on a branch a ROCm build never compiles
    functions: tuple[tuple[str, int, int, tuple[str, ...]], ...] = ()   # (name, lines, calls): C/C++ xlang, Python
    includes: tuple[str, ...] = ()   # C/C++, for xlang: the `#include "…"` paths
    unread_rules: tuple[tuple[int, int, tuple[str, ...]], ...] = ()   # C/C++: (first, last, rules) of unread lines


@dataclass(frozen=True, slots=True)
class FileResult:
    path: str
    kind: str
    findings: tuple[Finding, ...] = ()
    suppressed: int = 0
    vendored: tuple[str, ...] = ()                      # directories skipped as vendored code
    partial: bool = False
    error: str | None = None
    facts: FileFacts = FileFacts()
    coverage: FileCoverage | None = None      # CUDA references, for cuda and cpp files
    silenced: tuple[tuple[Finding, int], ...] = ()   # (finding, its suppression's line): match/suppress.honoured


@dataclass(frozen=True, slots=True)
class Component:
    path: str
    verdict: str
    rocm_build: bool
    reason: str
    optional: bool
    rocm_path: object = None         # auditor.model.rocmpath.model.RocmPath, when the component has a build to read
    kind: str = "primary"            # primary | secondary (a nested distribution of its own) | optional
    live: int = 0                    # the findings its verdict weighed (judge/analysis/verdict.py weighed)


def percent_of(part: int, total: int) -> float:
    """100 when there is nothing to count, as docs/hipify.md defines."""
    return 100.0 if total == 0 else round(100.0 * part / total, 1)


class _CoveragePercents:
    """`percent` and `clean_percent` of anything with converted, unconverted and clean counts."""

    __slots__ = ()
    converted: int
    unconverted: int
    clean: int

    @property
    def percent(self) -> float:
        return percent_of(self.converted, self.converted + self.unconverted)

    @property
    def clean_percent(self) -> float:
        return percent_of(self.clean, self.converted + self.unconverted)


@dataclass(frozen=True, slots=True)
class CoverageFile(_CoveragePercents):
    path: str
    converted: int
    unconverted: int
    clean: int
    translator: str                  # "torch-hipify" (torch.utils.cpp_extension) or "hipify" (hipify-perl/clang)


@dataclass(frozen=True, slots=True)
class Coverage(_CoveragePercents):
    converted: int = 0
    unconverted: int = 0
    files: tuple[CoverageFile, ...] = ()
    unconverted_names: tuple[tuple[str, int, tuple[str, ...]], ...] = ()   # (name, count, "path:line"s)
    clean: int = 0
    disagreements: tuple[tuple[str, bool, int], ...] = ()  # (name, HIPIFY converts it, references in
                                                           # files PyTorch's hipify translates)
    table: tuple[str, ...] = ()                            # what the API table was built from
    targets: tuple[tuple[str, int], ...] = ()              # (ROCm library converted references need, count)


@dataclass(frozen=True, slots=True)
class Assumption:
    """One constant of the effort model, as the report lists it."""

    name: str
    value: str
    source: str


@dataclass(frozen=True, slots=True)
class Effort:
    """Engineer-days, each as (low, high). Findings cost by category; HIPIFY review and validation are
    costs of their own; directories and files carry the findings and review costs found in them."""

    low_days: float
    high_days: float
    by_category: tuple[tuple[str, float, float], ...]
    assumptions: tuple[Assumption, ...] = ()
    hipify_review: tuple[float, float] = (0.0, 0.0)
    validation: tuple[float, float] = (0.0, 0.0)
    by_directory: tuple[tuple[str, float, float], ...] = ()
    by_file: tuple[tuple[str, float, float], ...] = ()      # in hours, costliest first: the hotspots
    kernel_files: int = 0            # files (generated families once) with __global__ kernels a ROCm build compiles
    reviewed_files: tuple[str, ...] = ()   # the files whose HIPIFY run and review the estimate pays for
    hours_per_day: float = 8.0       # the model's engineer-hours in a day, to show group hours as days


@dataclass(frozen=True, slots=True)
class Gate:
    """What findings were compared with: a baseline file or a git base (docs/gate.md)."""

    mode: str                        # "baseline" | "diff-base"
    against: str                     # the baseline file, or "REF (merge-base SHA)"
    gone: tuple[tuple[str, str, str, int], ...] = ()   # baseline entries no longer found: (rule, path, subject, count)
    changed_files: int | None = None                   # diff-base: files changed since the merge-base
    strict: bool = False             # --strict: a baseline that lists gone findings fails the run
    changed_paths: tuple[str, ...] = ()                # diff-base: the files changed since the merge-base
    unread_added: tuple[tuple[str, int, str], ...] = ()   # diff-base: (path, line, rule) added, unread, rule's words


@dataclass(frozen=True, slots=True)
class FindingGroup:
    """Sites of one rule in one file, or across files when they share a subject (judge/analysis/groups.py)."""

    rule_id: str
    key: str                          # the file, or the subject when the group spans files
    across_files: bool
    disposition: str                  # every site of a group has the same one
    indexes: tuple[int, ...]          # into the findings, in path and line order
    paths: tuple[str, ...]            # distinct files, in order
    severity: Severity                # the worst site's
    low_hours: float
    high_hours: float
    guarded: bool                     # every site is guarded

    @property
    def count(self) -> int:
        return len(self.indexes)

    @property
    def first(self) -> int:
        return self.indexes[0]

    def sort_key(self) -> tuple:
        """Worst severity first, then costliest, then largest: the order reports list groups in."""
        return (-self.severity, -self.high_hours, -self.count, self.rule_id, self.key)


@dataclass(frozen=True, slots=True)
class Report:
    root: str
    findings: tuple[Finding, ...]
    results: tuple[FileResult, ...]
    components: tuple[Component, ...]
    verdict: str
    verdict_reason: str
    coverage: Coverage
    effort: Effort
    rules: dict = field(default_factory=dict)   # id -> Rule, for the renderers
    errors: tuple[tuple[str, str], ...] = ()
    suppressed: int = 0
    vendored: tuple[str, ...] = ()                      # directories skipped as vendored code
    gate: Gate | None = None            # what each finding's `new` was measured against
    repo_prefix: str = ""               # the scanned root relative to its git repository's root, posix ("" = same)
    groups: tuple[FindingGroup, ...] = ()  # every finding in one group (judge/analysis/groups.py), most important first
    warnings: tuple[tuple[str, int, str], ...] = ()     # (path, line, message): unknown rule ids in suppressions
    unscanned: tuple[tuple[str, str], ...] = ()         # (path, why): not scanned completely, and that fails the
                                                        # run (auditor/failclosed); set by the gate, not the scan
    gate_findings: tuple[tuple[str, str], ...] = ()     # (where, what): the gate's own settings weakened
                                                        # (run/gate/failclosed/baselinerecord.py); each fails the run
    fail_on_verify: bool = False        # --fail-on-verify: findings to verify on hardware weigh like live ones

    @property
    def complete(self) -> bool:
        """Every file found was scanned completely (partial files count as scanned, unless `unscanned`)."""
        return not self.errors and not self.unscanned

    def breaks(self, finding: Finding) -> bool:
        """Whether `finding` would break on ROCm in this run (Finding.would_break with the run's choice)."""
        return finding.would_break(self.fail_on_verify)

    def gated(self) -> list[int]:
        """Indexes of the findings the gate weighs: the ones that would break on ROCm."""
        return [i for i, f in enumerate(self.findings) if self.breaks(f)]

    def counts(self) -> tuple[int, int]:
        """(new, known) findings that would break; every one is new when no gate is in use."""
        gated = [self.findings[i] for i in self.gated()]
        known = sum(1 for f in gated if f.new is False)
        return len(gated) - known, known

    def failing(self, fail_on: Severity | None) -> list[int]:
        """Indexes of the findings that fail the run at `fail_on`: would break, at or above it, not known."""
        if fail_on is None:
            return []
        return [i for i in self.gated() if self.findings[i].severity >= fail_on and self.findings[i].new is not False]

    def not_breaking(self) -> dict[str, int]:
        """How many findings of each other disposition there are (they have a ROCm path or are not on it)."""
        counts = Counter(f.disposition for f in self.findings if not self.breaks(f))
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
