"""A rule's traits: what judging its findings needs to know beyond its category (rules as data)."""
from __future__ import annotations

from types import MappingProxyType

# What a rule's findings are, beside their category, that judging them against the ROCm path needs (a rule's
# `traits` list; auditor/judge/ and auditor/judge/analysis/ read them, never a rule's id or name).
TRAITS = MappingProxyType({
    "hipify-renamed": "tests a compiler or version macro that HIPIFY renames (`__CUDACC__`, `CUDA_VERSION`)",
    "build-switch": "tests a build switch: live only where only the CUDA build defines the switch",
    "wide-shuffle": "reports a shuffle the ROCm build expands to a width-less, wavefront-wide one",
    "lane-rows": "finds lane and warp ids computed in 32-lane rows",
    "stale-hip": "finds what ROCm 6 removed in a HIP build path: the path is not proof that a current ROCm builds",
    "constant-definition": "reports a constant's definition: guarded when every use of it in the file is",
    "hipify-hazard": "a hazard HIPIFY translates without a word: a converted reference beside it is not clean",
})
