"""Which lines of a CMake file or Makefile sit on the CUDA side of a ROCm test.

`if(USE_ROCM) … else() <CUDA> endif()`, `if(NOT USE_ROCM) <CUDA> endif()`, and the Makefile forms
`ifdef USE_ROCM … else … endif` / `ifeq ($(USE_ROCM),1)`. Only positive ROCm tests are read.
"""
from __future__ import annotations

import re
from pathlib import PurePosixPath

from auditor.parsing.nesting import MAX_NESTING

CMAKE_DIRECTIVE = re.compile(r"^\s*(if|elseif|else|endif)\s*\((.*)\)\s*$", re.IGNORECASE)
MAKE_DIRECTIVE = re.compile(r"^\s*(ifeq|ifneq|ifdef|ifndef|else|endif)\b(.*)$")
CMAKE_NOT = re.compile(r"^\s*NOT\s+", re.IGNORECASE)


def _cmake_truth(condition: str, rocm: re.Pattern) -> bool | None:
    condition = condition.strip()
    if re.search(r"\b(?:AND|OR)\b", condition):
        return None
    negated = bool(CMAKE_NOT.match(condition))
    core = CMAKE_NOT.sub("", condition)
    if not rocm.search(core):
        return None
    if re.search(r"\bSTREQUAL\b", core) and not re.search(r'"(?:hip|rocm|HIP|ROCM|amd)"', core):
        return None
    return not negated


def _make_truth(word: str, rest: str, rocm: re.Pattern) -> bool | None:
    if not rocm.search(rest):
        return None
    if word == "ifdef":
        return True
    if word == "ifndef":
        return False
    if re.search(r",\s*\)|,\s*\"\"|,\s*''|,\s*0\s*\)", rest):  # ifeq ($(USE_ROCM),) / ,0)
        truth = False
    elif re.search(r",\s*(?:1|ON|on|true|yes|hip|rocm)\s*\)", rest):
        truth = True
    else:
        return None
    return truth if word == "ifeq" else not truth


def excluded_lines(path: str, text: str, rocm_pattern: str) -> frozenset[int]:
    name = PurePosixPath(path).name
    is_cmake = name == "CMakeLists.txt" or name.endswith(".cmake")
    rocm = re.compile(rocm_pattern)
    stack: list[list] = []  # [current branch truth, some earlier branch true]
    excluded: set[int] = set()
    for number, line in enumerate(text.splitlines(), start=1):
        code = line.split("#", 1)[0]
        m = CMAKE_DIRECTIVE.match(code) if is_cmake else MAKE_DIRECTIVE.match(code)
        if m:
            word = m.group(1).lower() if is_cmake else m.group(1)
            if word in ("if", "ifeq", "ifneq", "ifdef", "ifndef"):
                if len(stack) >= MAX_NESTING:
                    break     # not read further: nothing after is excluded
                truth = _cmake_truth(m.group(2), rocm) if is_cmake else _make_truth(word, m.group(2), rocm)
                stack.append([truth, truth])
            elif word == "elseif" and stack:
                truth = _cmake_truth(m.group(2), rocm)
                top = stack[-1]
                top[0] = False if top[1] is True else (truth if top[1] is False else None)
                top[1] = True if (top[1] is True or truth is True) else (None if None in (top[1], truth) else False)
            elif word == "else" and stack:
                top = stack[-1]
                top[0] = None if top[1] is None else not top[1]
            elif word == "endif" and stack:
                stack.pop()
            continue
        if any(entry[0] is False for entry in stack):
            excluded.add(number)
    return frozenset(excluded)
