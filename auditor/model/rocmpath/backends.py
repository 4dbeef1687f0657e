"""One backend among several: files and directories named for another vendor beside a sibling named for ROCm."""
from __future__ import annotations

import re
from collections.abc import Sequence

from auditor.types import SourceFile
from auditor.util.purepaths import pure

# a version may follow the name: `requirements_cuda12.txt` beside `requirements_rocm6.txt`
VENDOR_NAME = re.compile(r"(?i)^(?:nvidia|cuda\d*|cu\d+|cutlass|sycl|xpu|intel|npu|tpu|mps|metal|cann|musa|neuron)$")
ROCM_NAME = re.compile(r"(?i)^(?:rocm\d*|hip\d*|amd|amdgpu|aiter)$")


def _split(stem: str) -> tuple[str, str]:
    """`cuda_communicator` -> (`cuda`, `communicator`)."""
    parts = re.split(r"[_-]", stem, maxsplit=1)
    return (parts[0], parts[1]) if len(parts) == 2 else (stem, "")


def vendor_backends(files: Sequence[SourceFile]) -> frozenset[str]:
    """Files and directories named for another vendor (`nvidia/`, `requirements/cuda.txt`) next to a sibling
    named for ROCm (`amd/`, `requirements/rocm.txt`): one backend among several."""
    children: dict[str, set[str]] = {}
    for f in files:
        parts = pure(f.path).parts
        for depth in range(len(parts)):
            parent = "/".join(parts[:depth]) or "."
            children.setdefault(parent, set()).add(parts[depth])
    out: set[str] = set()
    for parent, names in children.items():
        stems = {name: pure(name).stem for name in names}
        rocm_whole = any(ROCM_NAME.match(stem) for stem in stems.values())
        rocm_rests = {_split(stem)[1] for stem in stems.values() if ROCM_NAME.match(_split(stem)[0])}
        rocm_heads = {_rsplit(stem)[0] for stem in stems.values() if ROCM_NAME.match(_rsplit(stem)[1])}
        for name, stem in stems.items():
            head, rest = _split(stem)
            front, tail = _rsplit(stem)   # `ggml-sycl` beside `ggml-hip`: the backend named last
            if (rocm_whole and VENDOR_NAME.match(stem)) or (VENDOR_NAME.match(head) and rest and rest in rocm_rests) \
                    or (VENDOR_NAME.match(tail) and front and front in rocm_heads):
                out.add(name if parent == "." else f"{parent}/{name}")
    return frozenset(out)


def _rsplit(stem: str) -> tuple[str, str]:
    """`ggml-sycl` -> (`ggml`, `sycl`)."""
    parts = re.split(r"[_-]", stem)
    return ("-".join(parts[:-1]), parts[-1]) if len(parts) > 1 else ("", stem)
