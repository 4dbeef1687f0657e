"""What a file's place in the tree says about its reach: CI and developer scripts, files written for ROCm, the
shipped packages."""
from __future__ import annotations

import re

from auditor.match.inputs.kinds import OPS_KINDS
from auditor.util.purepaths import pure

# (`packaging/`: release-wheel build scripts; the default install never runs them)
OPS_DIRS = frozenset({".github", ".gitlab", ".circleci", "docker", "dockerfiles", "ci", ".ci", "scripts", "tools",
                      "dev", ".buildkite", "jenkins", "devtools", "packaging"})
ROCM_DIRS = re.compile(r"(?i)^(?:rocm|hip|amd|amdgpu)$|(?:^|_)rocm(?:_|$)|^hip_|_hip$")
ROCM_FILE = re.compile(r"(?i)(?:^|_)rocm(?:_|\.|$)|^hip_")


def is_ops(path: str, kind: str) -> bool:
    """CI, container or developer script: by its kind or a directory it sits in."""
    if kind in OPS_KINDS:
        return True
    return any(part.lower() in OPS_DIRS for part in pure(path).parts[:-1])


def written_for_rocm(path: str) -> bool:
    p = pure(path)
    return p.suffix == ".hip" or any(ROCM_DIRS.search(part) for part in p.parts[:-1]) or bool(ROCM_FILE.search(p.name))


def under(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory + "/")


def in_packages(path: str, packages: frozenset[str]) -> bool:
    return any(path.startswith(p + "/") for p in packages)
