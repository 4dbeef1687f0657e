"""The settings of a run, one small frozen value per concern. A command's settings (cli/settings.py) are
composed of the concerns it uses, so a command cannot read an option it does not take."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from auditor.types import Severity


@dataclass(frozen=True, slots=True)
class Scope:
    """What is scanned, and within which limits (auditor/run/pipeline ScanOptions is made from it)."""
    paths: tuple[Path, ...]
    exclude: tuple[str, ...]
    force_exclude: bool
    include_vendored: bool
    jobs: int
    max_file_size: int
    time_budget: float
    worker_memory: int                # bytes each scanning process may take (0: the default)
    optional_dirs: tuple[str, ...]    # gitignore-style patterns: findings there are optional


@dataclass(frozen=True, slots=True)
class RuleChoice:
    """Which rules run: the shipped rules and the user's packs, selected, with an installed HIPIFY table."""
    select: tuple[str, ...]
    ignore: tuple[str, ...]
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...]   # (glob, rule ids or prefixes)
    rule_packs: tuple[Path, ...]      # --rules DIR: team rule packs added to the shipped rules
    hipify_perl: Path | None          # an installed hipify-perl whose tables replace the shipped API table


@dataclass(frozen=True, slots=True)
class Cache:
    """Where scan results and the compiled rulebook are cached, and the trees the cache must stay out of."""
    no_cache: bool                    # neither read nor write the result cache
    cache_dir: Path | None            # --cache-dir, ROCM_AUDIT_CACHE_DIR or the user's own config; None: default
    scanned: tuple[Path, ...]         # the default cache directory is not used when it lies in one of these


@dataclass(frozen=True, slots=True)
class Gate:
    """How the run is judged: the exit code, the baseline, the git base, what fails closed."""
    fail_on: Severity | None          # None = never
    fail_on_verify: bool              # findings to verify on hardware count as breaking (Report.breaks)
    exit_zero: bool                   # --exit-zero: findings never make the exit code 1
    baseline: Path | None             # known findings (--baseline FILE)
    update_baseline: bool
    strict: bool                      # fail when the baseline lists findings that are gone
    diff_base: str | None             # git ref: only what HEAD adds since the merge-base is new
    allow_partial: bool               # files not scanned completely do not fail the run (never from the tree)
    inline_suppressions: bool         # False: --no-inline-suppressions
    allow_new_suppressions: bool      # --diff-base honours suppressions on lines the change adds (base's config)
    gate_findings: tuple[tuple[str, str], ...]   # (where, what): gate settings the tree changed from the
                                                 # baseline's record (basesettings.from_record)


@dataclass(frozen=True, slots=True)
class Output:
    """How the report is shown: the main format and file, more files from the same run, the terminal's choices."""
    format: str
    output: Path | None
    outputs: tuple[tuple[str, Path], ...]   # (format, file) from --html/--sarif/--json/--markdown FILE
    no_html: bool
    quiet: bool
    verbose: bool                     # the terminal summary lists every finding group and the full tables
    statistics: bool                  # --statistics: a count per rule, as ruff prints it
    sarif_all: bool = False           # --sarif-all: SARIF lists the findings that do not break too (as notes)


@dataclass(frozen=True, slots=True)
class Recording:
    """check --record [--db PATH]: append the run to the history database (auditor/history)."""
    record: bool
    db: Path | None
