"""The ROCm variant of a file, beside it: the fixes that would turn a CUDA image or index into ROCm's are made in
a copy (Dockerfile -> Dockerfile.rocm, requirements.txt -> requirements-rocm.txt), never in the file itself, which
the project's NVIDIA builds and CI jobs keep using. Only container files and requirements lists get a variant;
for other files the variant is for a person to write."""
from __future__ import annotations

import posixpath
import re

_CUDA_WORD = re.compile(r"(?i)cuda|(?<![a-z])cu\d{2,3}(?!\d)")
_REQUIREMENTS = re.compile(r"(?i)^(?:.*[-_.])?requirements?(?:[-_.].*)?\.(?:txt|in)$|^(?:.*[-_.])?reqs?\.txt$")
_YAML = (".yml", ".yaml")
NO_VARIANT = ("a ROCm variant of this kind of file is for a person to write; the file itself stays as the NVIDIA "
              "builds use it")


def variant_path(path: str, kind: str) -> str | None:
    """Where the ROCm variant of `path` goes, or None when this kind of file gets none."""
    directory, name = posixpath.split(path)
    if kind == "container":
        if _CUDA_WORD.search(name):
            new = _CUDA_WORD.sub("rocm", name, count=1)
        elif name.lower().endswith(_YAML):
            stem, suffix = posixpath.splitext(name)
            new = f"{stem}.rocm{suffix}"
        else:
            new = f"{name}.rocm"
    elif kind == "manifest" and (_REQUIREMENTS.match(name) or (
            posixpath.basename(directory).lower().startswith("req") and name.endswith((".txt", ".in")))):
        stem, suffix = posixpath.splitext(name)
        new = _CUDA_WORD.sub("rocm", name, count=1) if _CUDA_WORD.search(stem) else f"{stem}-rocm{suffix}"
    else:
        return None
    return posixpath.join(directory, new) if new != name else None
