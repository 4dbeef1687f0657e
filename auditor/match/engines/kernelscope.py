"""Narrowing a CUDA query hit by the `__global__` kernel it sits in (a rule's `kernel_needs`)."""
from __future__ import annotations

import re

from auditor.parse import cuda as ts_cuda
from auditor.types import Rule


def kernel_lacks(rule: Rule, node) -> bool:
    """A hit of a rule with `kernel_needs` inside a `__global__` kernel whose text never matches that regex. For
    RA203: lane and warp ids computed with 32 in a kernel that has no warp-level operation (no shuffle, ballot,
    vote, warp sync, tiled partition, MMA, inline asm, volatile shared memory or call of a `*warp*` helper) only
    split work between threads (fused-ssim: `warp_id = tid / 32` picks the rows a group of threads copies), which
    is right on 32- and 64-lane wavefronts alike. Device functions and host code are not judged here: the kernel
    that calls them, or the launch they configure, is not in view."""
    pattern = rule.cuda.kernel_needs
    if not pattern:
        return False
    kernel = ts_cuda.enclosing_function(node)
    if kernel is None or not any(child.type == "__global__" for child in kernel.children):
        return False
    return re.search(pattern, ts_cuda.text(kernel)) is None
