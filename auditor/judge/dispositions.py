"""The dispositions a finding can have, and what each does to the verdict. Only `live` findings decide it."""
from __future__ import annotations

from enum import StrEnum
from types import MappingProxyType

from auditor import types

LIVE = types.LIVE                    # the dispositions the gate weighs are defined with Finding.would_break
VERIFY = types.VERIFY
GUARDED = "guarded"
OPS = "ops"
OPTIONAL = "optional"
SHIM = "shim-mapping"
OTHER_VENDOR = "other-vendor-backend"
PROJECT_MACRO = types.PROJECT_MACRO
OPTIONAL_FEATURE = "optional feature"
ALTERNATIVE = "cuda-only source, ROCm builds an alternative"
NOT_BUILT = "not built"
CUDA_BRANCH = "CUDA branch of a build script"
TOOLING = "repo tooling"


class Effect(StrEnum):
    """What a finding of a disposition does to its component's verdict (auditor/judge/analysis/verdict.py)."""

    DECIDES = "decides"
    VERIFY = "an item to verify"
    NOTE = "a note, never decides"
    NONE = "none"


EFFECTS = MappingProxyType({
    LIVE: Effect.DECIDES, VERIFY: Effect.VERIFY, GUARDED: Effect.NONE, PROJECT_MACRO: Effect.NONE,
    OPTIONAL: Effect.NOTE, OPTIONAL_FEATURE: Effect.NONE, ALTERNATIVE: Effect.NONE, NOT_BUILT: Effect.NONE,
    CUDA_BRANCH: Effect.NONE, SHIM: Effect.NONE, OTHER_VENDOR: Effect.NONE, OPS: Effect.NOTE, TOOLING: Effect.NOTE,
})
DISPOSITIONS = tuple(EFFECTS)
# listed with their own disposition, and never flip a verdict alone
OUTSIDE_MAIN_PATH = tuple(d for d, effect in EFFECTS.items() if effect == Effect.NOTE)
