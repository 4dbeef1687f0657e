"""Which lines of a CMake file or Makefile sit on the CUDA side of a ROCm test.

`if(USE_ROCM) … else() <CUDA> endif()`, `if(NOT USE_ROCM) <CUDA> endif()`, and the Makefile forms
`ifdef USE_ROCM … else … endif` / `ifeq ($(USE_ROCM),1)`. Only positive ROCm tests are read; each test's truth on
ROCm is auditor/truth/cmake.py's or auditor/truth/make.py's.
"""
from __future__ import annotations

import re
from pathlib import PurePosixPath

from auditor.parse.nesting import MAX_NESTING
from auditor.truth.cmake import cmake_truth
from auditor.truth.make import make_truth
from auditor.truth.switches import BuildTests

CMAKE_DIRECTIVE = re.compile(r"^\s*(if|elseif|else|endif)\s*\((.*)\)\s*$", re.IGNORECASE)
MAKE_DIRECTIVE = re.compile(r"^\s*(ifeq|ifneq|ifdef|ifndef|else|endif)\b(.*)$")


def excluded_lines(path: str, text: str, tests: BuildTests) -> frozenset[int]:
    name = PurePosixPath(path).name
    is_cmake = name == "CMakeLists.txt" or name.endswith(".cmake")
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
                truth = cmake_truth(m.group(2), tests) if is_cmake else make_truth(word, m.group(2), tests)
                stack.append([truth, truth])
            elif word == "elseif" and stack:
                truth = cmake_truth(m.group(2), tests)
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
