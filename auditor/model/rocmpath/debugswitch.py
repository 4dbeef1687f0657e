"""Debug switches nothing defines: a project macro such as `TV_DEBUG` that C/C++ sources only test (`#ifdef
TV_DEBUG`, `#if defined(TV_DEBUG)`) and that no source (`#define`) or build file (`-DTV_DEBUG`, `define_macros`,
`add_definitions`, `target_compile_definitions`) defines. The default build, on CUDA and on ROCm, never compiles
what it guards, so findings there are an optional feature, like the lines behind a Makefile opt-in."""
from __future__ import annotations

import re
from collections.abc import Iterable

from auditor.parse.preproc import DEFINED_MACRO

# names that read as a debug switch; NDEBUG is the release build's own macro, so `#ifndef NDEBUG` is not one
SWITCH = re.compile(r"\b([A-Za-z][A-Za-z0-9_]*DEBUG[A-Za-z0-9_]*)\b")
TESTED = re.compile(r"^[ \t]*#[ \t]*(?:if|ifdef|elif)\b([^\n]*)", re.MULTILINE)


def tested_switches(c_texts: Iterable[str]) -> set[str]:
    """Debug-looking names that `#if`/`#ifdef`/`#elif` lines test, less those any of these sources #defines."""
    tested: set[str] = set()
    defined: set[str] = set()
    for text in c_texts:
        if "DEBUG" not in text:
            continue
        for line in TESTED.findall(text):
            tested.update(name for name in SWITCH.findall(line) if name != "NDEBUG")
        defined.update(DEFINED_MACRO.findall(text))
    return tested - defined


def undefined_switches(tested: set[str], build_texts: Iterable[str]) -> frozenset[str]:
    """The tested switches that no build file names: a build that mentions one may define it."""
    left = set(tested)
    for text in build_texts:
        if not left:
            break
        left -= {name for name in left if name in text}
    return frozenset(left)
