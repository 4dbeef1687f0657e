"""Which guarded lines only the project's own macros guard: `#ifndef GGML_USE_HIP` is a branch a ROCm build skips
because the project's HIP build defines GGML_USE_HIP (docs/reach-model.md), not because of a macro every
ROCm compiler defines. Such findings get the disposition "guarded by a project macro"."""
from __future__ import annotations

from dataclasses import replace

from auditor.parse.preproc import LineStates, line_states
from auditor.truth.cpp import PreprocFacts

NOTE = "the branch a ROCm build skips is chosen by a macro the project's own build defines"


def lines_guarded_by_project_macros(text: str, facts: PreprocFacts, states: LineStates) -> frozenset[int]:
    """Lines `states` (read with the project's macros) excludes that a reading without them compiles."""
    project = facts.project_macros
    if not project or not states.excluded:
        return frozenset()
    without = replace(facts, rocm_defined=facts.rocm_defined - project,
                      cuda_only_defined=facts.cuda_only_defined - project)
    plain = line_states(text, without)
    return frozenset(states.excluded - plain.excluded - plain.dead)
