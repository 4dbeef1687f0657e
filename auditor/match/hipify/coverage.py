"""HIPIFY coverage (docs/hipify.md): the per-file reference counts of the scan, added up. Pure function.

Translator context: a source in a component (the directory of a setup.py or pyproject.toml) whose Python code
builds extensions with torch.utils.cpp_extension (CUDAExtension, load, load_inline) is hipified by PyTorch's
own table when it is built on ROCm ("torch-hipify"); any other goes through hipify-perl or hipify-clang
("hipify"). The counts always follow HIPIFY's table; where PyTorch's table treats a name
referenced in a torch-hipify file the other way, `disagreements` says so.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import PurePosixPath

from auditor.types import Coverage, CoverageFile, FileResult
from auditor.util.purepaths import pure

TORCH, HIPIFY = "torch-hipify", "hipify"
LOCATIONS_PER_NAME = 20   # file:line of the first references of each unconverted name


COMPONENT_FILES = {"setup.py", "pyproject.toml"}


def _owner(path: PurePosixPath, roots: set[PurePosixPath]) -> PurePosixPath:
    """The nearest component root above a file (the scanned root when there is none)."""
    return next((d for d in path.parents if d in roots), pure("."))


def _torch_roots(results: Sequence[FileResult]) -> tuple[set[PurePosixPath], set[PurePosixPath]]:
    """(component roots, those whose Python code builds with torch.utils.cpp_extension)."""
    roots = {pure(r.path).parent for r in results if pure(r.path).name in COMPONENT_FILES}
    torch = {_owner(pure(r.path), roots) for r in results if r.facts.cpp_extension}
    return roots, torch


def translator_for(path: str, roots: set[PurePosixPath], torch: set[PurePosixPath]) -> str:
    return TORCH if _owner(pure(path), roots) in torch else HIPIFY


def coverage(results: Sequence[FileResult], table: Sequence[str] = ()) -> Coverage:
    roots, torch_roots = _torch_roots(results)
    files: list[CoverageFile] = []
    names: Counter[str] = Counter()
    where: dict[str, list[str]] = {}
    disagree: Counter[tuple[str, bool]] = Counter()
    targets: Counter[str] = Counter()
    converted = unconverted = clean = 0
    for result in sorted(results, key=lambda r: r.path):
        cov = result.coverage
        if cov is None or cov.total == 0:
            continue
        translator = translator_for(result.path, roots, torch_roots)
        files.append(CoverageFile(result.path, cov.converted, len(cov.unconverted), cov.clean, translator))
        converted += cov.converted
        unconverted += len(cov.unconverted)
        clean += cov.clean
        targets.update(dict(cov.targets))
        for name, line in cov.unconverted:
            names[name] += 1
            if len(where.setdefault(name, [])) < LOCATIONS_PER_NAME:
                where[name].append(f"{result.path}:{line}")
        if translator == TORCH:
            for name, hipify_converts, count in cov.disagreements:
                disagree[(name, hipify_converts)] += count
    return Coverage(
        converted=converted,
        unconverted=unconverted,
        files=tuple(files),
        unconverted_names=tuple((name, n, tuple(where[name])) for name, n in
                                sorted(names.items(), key=lambda item: (-item[1], item[0]))),
        clean=clean,
        disagreements=tuple((name, hipify, n) for (name, hipify), n in
                            sorted(disagree.items(), key=lambda item: (-item[1], item[0]))),
        table=tuple(table),
        targets=tuple(sorted(targets.items(), key=lambda item: (-item[1], item[0]))),
    )
