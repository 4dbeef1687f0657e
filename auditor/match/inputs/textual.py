"""Engines for manifests, build, container, CI and shell files, conda recipes and YAML: regexes over lines and
the requirements they declare."""
from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath

from auditor.match.engines.dependency import requirement_findings, url_findings
from auditor.match.engines.text import scan_text
from auditor.match.inputs.engine import EngineResult, ScanInput
from auditor.parse.manifest import (
    READERS, ManifestContent, manifest_flavour, pip_install_commands, resolve_include,
)
from auditor.match.rulebook.context import ScanContext
from auditor.types import Finding


@dataclass(frozen=True, slots=True)
class ManifestEngine:
    """`is_manifest`: whether discovery reads a path as a manifest of its own (then an include of it is not
    followed: its findings are that file's)."""

    is_manifest: Callable[[str], bool]

    def scan(self, source: ScanInput, ctx: ScanContext) -> EngineResult:
        path, lines = source.path, source.lines
        flavour = manifest_flavour(path)
        content: ManifestContent = READERS[flavour](source.text) if flavour else ManifestContent()
        rules = ctx.family("dependency")
        found = list(requirement_findings(rules, content.declared, path, lines))
        found += url_findings(rules, content.urls, path, lines)
        found += _included(path, content, ctx, source.abspath, seen={path}, is_manifest=self.is_manifest)
        return EngineResult(tuple(found))


def _included(path, content, ctx, abspath, seen: set[str], is_manifest: Callable[[str], bool]) -> list[Finding]:
    """Follow `-r`/`-c` includes that discovery would not scan on its own: inside the scanned root only, regular
    files of bounded size only (an include of /dev/zero, /proc or ../../ outside the tree is not read)."""
    from auditor.util.boundedio import SMALL_CAP, UnsafeRead, read_bounded

    found: list[Finding] = []
    if abspath is None:
        return found
    root = Path(abspath).parent
    for _ in PurePosixPath(path).parts[1:]:
        root = root.parent
    for target, _line in content.includes:
        joined = os.path.normpath(str(PurePosixPath(path).parent / target))
        if PurePosixPath(target).is_absolute() or target.startswith("~") or joined == ".." \
                or joined.startswith("../"):
            continue   # outside the scanned root
        relative = resolve_include(path, target)
        if not relative or relative in seen or is_manifest(relative):
            continue
        seen.add(relative)
        include_path = root / relative
        try:
            if not include_path.resolve().is_relative_to(root.resolve()):
                continue
            text = read_bounded(include_path, SMALL_CAP, "requirements include").decode("utf-8", "replace")
        except (OSError, UnsafeRead):
            continue
        inner = READERS["requirements"](text)
        lines = text.splitlines()
        rules = ctx.family("dependency")
        found += requirement_findings(rules, inner.declared, relative, lines)
        found += url_findings(rules, inner.urls, relative, lines)
        found += _included(relative, inner, ctx, include_path, seen, is_manifest)
    return found


@dataclass(frozen=True, slots=True)
class TextEngine:
    """The text rules whose `files` name `kind`, and the packages its `pip install` commands name."""

    kind: str

    def scan(self, source: ScanInput, ctx: ScanContext) -> EngineResult:
        path, text, lines = source.path, source.text, source.lines
        found = scan_text(text, ctx, path, self.kind, lines)
        content = pip_install_commands(text)
        rules = ctx.family("dependency")
        found += requirement_findings(rules, content.declared, path, lines)
        found += url_findings(rules, content.urls, path, lines)
        return EngineResult(tuple(found))


@dataclass(frozen=True, slots=True)
class CondaEngine:
    """A conda recipe: its requirements through the dependency rules, its Jinja and selectors through the text
    rules. A line rendered only for a CUDA build variant (a `# [cuda_compiler_version != "None"]` selector or
    `{% if cuda_compiler_version != "None" %}` block) is optional: the recipe also builds without CUDA."""

    def scan(self, source: ScanInput, ctx: ScanContext) -> EngineResult:
        from auditor.parse.conda_recipe import cuda_variant_lines, recipe_requirements

        path, text, lines = source.path, source.text, source.lines
        found = scan_text(text, ctx, path, "conda", lines)
        found += requirement_findings(ctx.family("dependency"), recipe_requirements(text), path, lines)
        variant_only = cuda_variant_lines(text)
        return EngineResult(tuple(replace(f, optional=True) if f.span.line in variant_only else f for f in found))


@dataclass(frozen=True, slots=True)
class YamlEngine:
    """A YAML file discovery did not place (a rule example, or a file named on the command line)."""

    def scan(self, source: ScanInput, ctx: ScanContext) -> EngineResult:
        from auditor.match.inputs.yamlkind import looks_like_k8s

        return TextEngine("k8s").scan(source, ctx) if looks_like_k8s(source.text) else EngineResult()
