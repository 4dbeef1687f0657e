"""A Makefile read for the ROCm path: whether it compiles `.cu` files or uses hipcc, and its opt-in blocks
(`VAR ?= 0` + `ifeq ($(VAR),1)`), whose macros are optional features."""
from __future__ import annotations

import re

from auditor.parse.nesting import MAX_NESTING, too_deep
from auditor.model.rocmpath.cmakebuild import CBuild
from auditor.truth.make import compiles_cuda, compiles_for_rocm

MAKE_OPT_IN = re.compile(r"^\s*([A-Za-z_]\w*)\s*\?=\s*0\s*$")
MAKE_IFEQ = re.compile(r"^\s*ifeq\s*\(\s*\$\(([A-Za-z_]\w*)\)\s*,\s*1\s*\)")


def read_makefile(path: str, text: str) -> CBuild:
    """Makefile: `.cu` compilation, and macros defined only inside opt-in blocks."""
    build = CBuild(path)
    opt_in_vars = {m.group(1) for line in text.splitlines() if (m := MAKE_OPT_IN.match(line))}
    depth_opt: list[bool] = []
    for number, line in enumerate(text.splitlines(), start=1):
        m = MAKE_IFEQ.match(line)
        opens = m is not None or re.match(r"^\s*if(?:n?eq|n?def)\b", line) is not None
        if opens and len(depth_opt) >= MAX_NESTING:
            build.partial = too_deep()
            break
        if m:
            depth_opt.append(m.group(1) in opt_in_vars)
            continue
        if opens:
            depth_opt.append(False)
            continue
        if re.match(r"^\s*endif\b", line) and depth_opt:
            depth_opt.pop()
            continue
        if compiles_cuda(line):
            build.compiles_cu = True
        if any(depth_opt):
            build.optional_macros.update(re.findall(r"-D([A-Za-z_]\w*)", line))
            build.opt_in_lines.add(number)
        if compiles_for_rocm(line):
            build.evidence.append((number, line.strip()))
            build.rocm_tests.append(number)
    return build
