"""ROCm install manifests beside the CUDA ones: `requirements-rocm*.txt`, extras named
`rocm`/`hip`/`amd` or `*_hip`, and alternative `pyproject_*.toml` files whose extras are the ROCm install. For a
project that compiles no GPU code they are its ROCm path, and the install recipe is read from them."""
from __future__ import annotations

import re
import tomllib
from auditor.util.tomltext import load_toml
from collections.abc import Iterable
from pathlib import PurePosixPath

ROCM_EXTRA = re.compile(r"(?i)^(?:amd|rocm\w*|hip|\w+[-_](?:hip|rocm\w*|amd))$")
ROCM_REQUIREMENTS = re.compile(r"(?i)^requirements[-_.](?:\w+[-_])?(?:rocm|hip|amd)(?:[-_.\w]*)\.(?:txt|in)$")
PYPROJECTS = re.compile(r"(?i)^pyproject(?:[-_][\w-]+)?\.toml$")


def rocm_requirements(path: str) -> bool:
    return bool(ROCM_REQUIREMENTS.match(PurePosixPath(path).name))


def rocm_extras(path: str, text: str) -> list[tuple[str, int]]:
    """(extra, line) for each ROCm extra a pyproject.toml or an alternative pyproject_*.toml declares."""
    if not PYPROJECTS.match(PurePosixPath(path).name):
        return []
    try:
        data = load_toml(text)
    except (tomllib.TOMLDecodeError, ValueError):
        return []
    extras = (data.get("project") or {}).get("optional-dependencies") or {}
    found = []
    for extra in extras if isinstance(extras, dict) else ():
        if ROCM_EXTRA.match(extra):
            key = re.compile(rf"\s*['\"]?{re.escape(extra)}['\"]?\s*=")
            line = next((n for n, row in enumerate(text.splitlines(), 1) if key.match(row)), 1)
            found.append((extra, line))
    return found


def manifest_recipe(requirement_files: Iterable[str], extras: Iterable[tuple[str, str]]) -> str:
    """The install a ROCm manifest describes: `pip install -r <requirements-rocm.txt> .` or `pip install ".[rocm]"`
    (an extra of an alternative pyproject file is named with it)."""
    for path in sorted(requirement_files):
        return f"pip install -r {path} ."
    for path, extra in extras:
        name = PurePosixPath(path).name
        where = "" if name == "pyproject.toml" else f" (with {path} as the pyproject.toml)"
        return f'pip install ".[{extra}]"{where}'
    return ""
