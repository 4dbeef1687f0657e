"""Imports of the project's own extension modules that the default ROCm install does not build.

A build script that adds an extension only in its CUDA configuration (`if CUDA_HOME is not None:
ext_modules.append(CUDAExtension("pkg.gpu", ...))`: CUDA_HOME is None on ROCm PyTorch) installs the package
without it on ROCm, and every import of it that runs there raises. The build line is reported where it is (its
own rule); each import is where the package breaks, so it is reported too. The imports are read by the Python
engine with the rule turned into an import rule of those module names, so its guards apply as to any import: one
inside `try: ... except ImportError`, or on a branch ROCm does not take (`if torch.version.cuda:`), is guarded;
one under a test true on ROCm (`if torch.cuda.device_count() > 0:`) is not. Relative imports (`from .. import
gpu`) are read as the module they name."""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

from auditor.match.engines.python.engine import scan_python
from auditor.match.rulebook import Rulebook
from auditor.match.rulebook.context import ScanContext
from auditor.match.rulebook.schema import DependencyMatch, OwnExtensionMatch
from auditor.match.xlang.importchain import module_names
from auditor.parse.python import PythonParseError, parse
from auditor.types import FileResult, Finding

Reader = Callable[[str], "str | None"]


def link_own_extensions(results: Sequence[FileResult], rules_in_force: Rulebook | ScanContext, read: Reader,
                        built_only_for: dict[str, Iterable[str]]) -> list[Finding]:
    """The findings of each `ownextension` rule. `built_only_for`: configuration -> the dotted module names of
    the extensions only that configuration of the project's build builds (`cuda`: ProjectBuild's CUDA-only
    artifacts)."""
    context = ScanContext.of(rules_in_force)
    python = sorted(r.path for r in results if r.kind == "python" and r.error is None)
    out: list[Finding] = []
    for rule in context.family("ownextension"):
        spec = rule.spec
        if not isinstance(spec, OwnExtensionMatch):
            continue
        wanted = sorted({m for config in spec.built_only_for for m in built_only_for.get(config, ())})
        if wanted and python:
            probe = replace(rule, spec=DependencyMatch(imports=tuple(wanted)))
            probing = ScanContext(Rulebook((probe,), guards=context.rulebook.guards), context.guards)
            out += _imports(python, wanted, probing, read)
    return out


def _imports(python: list[str], wanted: list[str], probing: ScanContext, read: Reader) -> list[Finding]:
    """The import sites of `wanted` in the Python files that name the last part of one of them."""
    last = re.compile(r"\b(?:" + "|".join(re.escape(m.rsplit(".", 1)[-1]) for m in wanted) + r")\b")
    names = module_names(python)
    out: list[Finding] = []
    for path in python:
        text = read(path)
        if text is None or not last.search(text):
            continue
        try:
            tree = parse(text)
        except PythonParseError:
            continue
        out += scan_python(tree, probing, path, text.splitlines(), module=names.get(path)).findings
    return out
