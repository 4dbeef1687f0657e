"""Which guarded lines only the project's own macros guard: `#ifndef GGML_USE_HIP` is a branch a ROCm build skips
because the project's HIP build defines GGML_USE_HIP (README.md, The ROCm path), not because of a macro every
ROCm compiler defines. Such findings get the disposition "guarded by a project macro"."""
from __future__ import annotations

from auditor.parsing.preproc import LineStates, PreprocFacts, line_states

NOTE = "the branch a ROCm build skips is chosen by a macro the project's own build defines"


def lines_guarded_by_project_macros(text: str, guards: dict, states: LineStates) -> frozenset[int]:
    """Lines `states` (read with the project's macros) excludes that a reading without them compiles."""
    pre = guards.get("preprocessor", {})
    project = set(pre.get("project_macros", ()))
    if not project or not states.excluded:
        return frozenset()
    without = {**pre, **{key: [m for m in pre.get(key, ()) if m not in project]
                         for key in ("rocm_defined", "cuda_only_defined")}}
    plain = line_states(text, PreprocFacts.from_guards({"preprocessor": without}))
    return frozenset(states.excluded - plain.excluded - plain.dead)
