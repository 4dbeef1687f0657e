"""CUDA C++ source held in a Python string for a compile at run time (a JIT module's template, a kernel
string given to nvcc or NVRTC later): the cuda rules read it as they read a `.cu` file.

Only a string that is device code by its own text counts: a line `#include <cuda_runtime.h>` (or another CUDA
toolkit header: `cuda/...`, `cub/...`, cooperative groups, `mma.h`), or a `__global__` function. Docstrings
and one-line strings (a message that names `__global__`) are not code. A string passed to the calls in
EMBEDDED_CUDA_CALLS is read whatever its text."""
from __future__ import annotations

import re

CUDA_SOURCE = re.compile(
    r"(?m)^[ \t]*#[ \t]*include[ \t]*[<\"](?:cuda(?:_runtime(?:_api)?|_fp16|_bf16|_fp8|_pipeline|_awbarrier)\.h"
    r"|cuda\.h|cuda/[\w/.]+|cub/[\w/.]+|cooperative_groups(?:/[\w/.]+|\.h)|mma\.h)[>\"]"
    r"|\b__global__[ \t\r\n]+(?:void|static|inline|__launch_bounds__)\b")
# what a file's lower-cased text contains when one of its strings can match CUDA_SOURCE (the Python gate)
CUDA_SOURCE_NEEDLES = ("__global__", "<cuda", "\"cuda", "<cub/", "cooperative_groups", "<mma.h>")


def is_cuda_source(value: str) -> bool:
    """A multi-line string whose text is CUDA device code."""
    return "\n" in value and CUDA_SOURCE.search(value) is not None
