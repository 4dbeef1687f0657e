"""What one file's scan reads besides the file: the rules in force, the guards with the scanned project's facts,
and the values derived from them once per run (indexes, gates, compiled query groups).

The Rulebook is loaded once and never rebuilt with facts about a project: those facts (macros its build defines on
ROCm or only for CUDA, macro values it derives on ROCm, rules its own packages turn off) live here, in a value
made once per run by the pipeline's `prepare`.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, TypeVar

from auditor.truth.cpp import PreprocFacts
from auditor.truth.python import PythonPersona
from auditor.truth.switches import BuildTests
from auditor.types import Rule

if TYPE_CHECKING:
    from auditor.match.hipify.apitable import ApiTable
    from auditor.match.rulebook import Rulebook

T = TypeVar("T")


@dataclass(frozen=True)
class Guards:
    """The validated guards.toml (auditor/match/rulebook/schema.py checks every key at load) with the scanned project's
    preprocessor facts: `preprocessor` is what the C/C++ engine and the macro pre-pass evaluate `#if` with,
    `python` what the Python engine reads a test's truth on ROCm from, `build` the text rules' reading of a build
    file's ROCm tests (auditor/truth/cmake.py, make.py)."""

    preprocessor: PreprocFacts
    python: PythonPersona
    build: BuildTests

    @classmethod
    def of(cls, table: Mapping[str, Mapping[str, object]]) -> "Guards":
        """The guards of a rulebook, before any project fact."""
        return cls(PreprocFacts.from_guards(dict(table)),
                   PythonPersona.of(table.get("python", {}), table.get("persona", {})),
                   BuildTests.of(dict(table.get("build", {}))))

    def with_project_macros(self, rocm: frozenset[str], cuda_only: frozenset[str]) -> "Guards":
        """Macros the project's build defines on ROCm (`GGML_USE_HIP`), and those it defines only for CUDA or
        behind an opt-in (docs/reach-model.md)."""
        pre = self.preprocessor
        known = pre.rocm_defined | pre.cuda_only_defined | pre.rocm_version_macros
        return replace(self, preprocessor=replace(
            pre, rocm_defined=pre.rocm_defined | rocm, cuda_only_defined=pre.cuda_only_defined | (cuda_only - rocm),
            project_macros=pre.project_macros | ((rocm | cuda_only) - known)))

    def with_cuda_only_macros(self, names: frozenset[str]) -> "Guards":
        """Macros the project's sources define only on CUDA-only branches (auditor/run/runner/macros.py)."""
        pre = self.preprocessor
        return replace(self, preprocessor=replace(pre, cuda_only_defined=pre.cuda_only_defined | names))

    def with_rocm_values(self, values: Mapping[str, int]) -> "Guards":
        """Macro values the project's sources derive on ROCm (`#define BNB_HIP 1`)."""
        if not values:
            return self
        pre = self.preprocessor
        merged = {**dict(pre.rocm_values), **values}
        return replace(self, preprocessor=replace(
            pre, rocm_values=tuple(sorted(merged.items())), cuda_only_defined=pre.cuda_only_defined - set(values)))

    def as_data(self) -> dict:
        """Plain data for digests (the result cache's key, the macro pre-pass's)."""
        pre = self.preprocessor
        return {"preprocessor": {"rocm_defined": sorted(pre.rocm_defined),
                                 "rocm_version_macros": sorted(pre.rocm_version_macros),
                                 "cuda_only_defined": sorted(pre.cuda_only_defined),
                                 "rocm_values": dict(pre.rocm_values),
                                 "project_macros": sorted(pre.project_macros)},
                "python": self.python.as_data(), "build": self.build.as_data()}


class Memo:
    """Values derived once per run and per process (an index, a gate, tree-sitter query groups compiled here).
    Held by the ScanContext, never pickled with it: a worker process derives its own."""

    __slots__ = ("values",)

    def __init__(self) -> None:
        self.values: dict = {}

    def get(self, key: tuple, make: Callable[[], T]) -> T:
        values = self.values
        if key not in values:
            values[key] = make()
        return values[key]

    def __getstate__(self) -> None:
        return None

    def __setstate__(self, state: None) -> None:
        self.values = {}


@dataclass(frozen=True)
class ScanContext:
    """The part of a run's context that scanning a file reads (the pipeline's RunContext holds one)."""

    rulebook: "Rulebook"
    guards: Guards
    dropped: frozenset[str] = frozenset()     # rule ids the project's own packages turn off (model/ownpackages.py)
    memo: Memo = field(default_factory=Memo, compare=False, repr=False)

    @classmethod
    def of(cls, rulebook: "Rulebook | ScanContext") -> "ScanContext":
        """A context as given, or a rulebook's own (no project facts): what a rule example or a test scans with."""
        return rulebook if isinstance(rulebook, ScanContext) else rulebook.own_context

    def with_guards(self, guards: Guards) -> "ScanContext":
        return replace(self, guards=guards, memo=Memo())

    def without(self, rule_ids: Iterable[str]) -> "ScanContext":
        return replace(self, dropped=self.dropped | frozenset(rule_ids), memo=Memo())

    @property
    def rules(self) -> tuple[Rule, ...]:
        if not self.dropped:
            return self.rulebook.rules
        return self.memo.get(("rules",), lambda: tuple(r for r in self.rulebook.rules if r.id not in self.dropped))

    def family(self, name: str) -> tuple[Rule, ...]:
        if not self.dropped:
            return self.rulebook.family(name)
        return self.memo.get(("family", name), lambda: tuple(
            r for r in self.rulebook.family(name) if r.id not in self.dropped))

    def by_id(self) -> dict[str, Rule]:
        return {rule.id: rule for rule in self.rules}

    @property
    def table(self) -> "ApiTable":
        return self.rulebook.table

    def derived(self, key: tuple, make: Callable[[], T]) -> T:
        """A value an engine derives from the rules and guards in force, made once per run and process."""
        return self.memo.get(key, make)

    def compiled(self, key: tuple, make: Callable[[], T]) -> T:
        """A value made from the rules' own text alone, whatever the project (tree-sitter query groups compiled in
        this process): kept with the rulebook, so the runs of one process that share it share the value."""
        return self.rulebook.compiled.get(key, make)

    def known(self, key: tuple) -> bool:
        """Whether `compiled` holds a value for this key in this process."""
        return key in self.rulebook.compiled.values

    def suppression_ids(self) -> dict[str, str]:
        return self.rulebook.suppression_ids()

    @property
    def digest(self) -> str:
        """The rulebook's digest with this run's project facts: what a cached result or index depends on."""
        return self.memo.get(("digest",), self._digest)

    def _digest(self) -> str:
        h = hashlib.blake2b(self.rulebook.digest.encode(), digest_size=12)
        h.update(json.dumps([self.guards.as_data(), sorted(self.dropped)], sort_keys=True, default=str).encode())
        return h.hexdigest()
