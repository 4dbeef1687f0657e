"""Makefile conditionals and lines read on a ROCm build, fed by rules/guards.toml: `make_truth` (three-valued, for
the text rules' reading of a build file, from [build]) and what a line compiles (for the build reader, [make])."""
from __future__ import annotations

import re

from auditor.truth.cpp import Tri
from auditor.truth.switches import BuildTests, MakeSwitches, shipped

EMPTY_OR_ZERO = re.compile(r",\s*\)|,\s*\"\"|,\s*''|,\s*0\s*\)")   # ifeq ($(USE_ROCM),) / ,0)


def make_truth(word: str, rest: str, tests: BuildTests) -> Tri:
    """`ifdef USE_ROCM` true, `ifndef USE_ROCM` false, `ifeq ($(USE_ROCM),1)` true, `ifneq ($(USE_ROCM),)` true on
    ROCm; unknown for anything but a positive ROCm test."""
    if not re.search(tests.rocm_condition, rest):
        return None
    if word == "ifdef":
        return True
    if word == "ifndef":
        return False
    if EMPTY_OR_ZERO.search(rest):
        truth = False
    elif re.search(rf",\s*{tests.make_true_value}\s*\)", rest):
        truth = True
    else:
        return None
    return truth if word == "ifeq" else not truth


def compiles_cuda(line: str, switches: MakeSwitches | None = None) -> bool:
    """nvcc, or a `.cu` source."""
    return bool((switches or shipped().make).cuda_compile.search(line))


def compiles_for_rocm(line: str, switches: MakeSwitches | None = None) -> bool:
    """hipcc, or an AMD GPU flag."""
    return bool((switches or shipped().make).rocm_compile.search(line))
