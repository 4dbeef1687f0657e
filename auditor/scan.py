"""scan_file: read once, parse once, run the engines for the file's kind. Never raises."""
from __future__ import annotations

import codecs
import logging
import os
import re
import traceback
from dataclasses import replace
from pathlib import Path, PurePosixPath

from auditor.engines.dependency import requirement_findings, url_findings
from auditor.engines.text import scan_text
from auditor.errors import ScannedFileError
from auditor.escape import visible
from auditor.parsing.preproc import PreprocFacts
from auditor.parsing.manifest import (
    READERS, ManifestContent, ManifestError, manifest_flavour, pip_install_commands, resolve_include,
)
from auditor.rulebook import Rulebook
from auditor.rulebook.context import ScanContext
from auditor.suppress import read_suppressions
from auditor.types import PROJECT_MACRO, FileFacts, FileResult, Finding, SourceFile, Span

MAX_FILE_BYTES = 16 * 1024 * 1024
ROCM_BUILD = re.compile(
    r"IS_HIP_EXTENSION|ROCM_HOME|USE_ROCM|enable_language\s*\(\s*HIP\b|LANGUAGES[^)\n]*\bHIP\b"
    r"|find_package\s*\(\s*(?:hip|HIP)\b|\bhipcc\b|--offload-arch|PYTORCH_ROCM_ARCH|HIP_PLATFORM"
    r"|CMAKE_HIP_ARCHITECTURES|\bBUILD_TARGET\b.*\brocm\b|torch\.version\.hip"
)
DEBUG_LOG = logging.getLogger("rocm_audit")   # --debug shows it (auditor/cli.py): a file's internal error in full
BUILD_FILE_NAMES = {"setup.py", "CMakeLists.txt", "pyproject.toml", "Makefile", "setup.cfg"}


class InputError(ScannedFileError):
    """The file cannot be read as text; the message says why."""


def decode(data: bytes) -> tuple[str, str | None]:
    """Text and, when it was not plain UTF-8, how it was decoded."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16", "replace"), "UTF-16"
    if b"\0" in data[:8192]:
        raise InputError("binary file (NUL bytes)")
    try:
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError:
        return data.decode("latin-1"), "Latin-1 (not valid UTF-8)"


def read_bytes(source: SourceFile, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    path = Path(source.abspath)
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise InputError(f"skipped: {size / 1e6:.1f} MB is over the {max_bytes / 1e6:.0f} MB file size limit")
        with path.open("rb") as handle:
            return handle.read(max_bytes + 1)
    except OSError as err:
        raise InputError(f"cannot read: {err.strerror or err}") from None


def read_source(source: SourceFile, max_bytes: int = MAX_FILE_BYTES) -> tuple[str, str | None]:
    return decode(read_bytes(source, max_bytes))


def scan_file(
    source: SourceFile, ctx: Rulebook | ScanContext, max_bytes: int = MAX_FILE_BYTES, data: bytes | None = None
) -> FileResult:
    """`data`: the file's bytes when the caller has read them already (read_bytes). `ctx`: the run's scan context
    (a rulebook alone scans with its own guards and no project facts)."""
    ctx = ScanContext.of(ctx)
    try:
        text, encoding_note = read_source(source, max_bytes) if data is None else decode(data)
    except InputError as err:
        return FileResult(source.path, source.kind, error=str(err))
    try:
        return scan_text_as(source.path, source.kind, text, ctx, Path(source.abspath), encoding_note)
    except RecursionError:
        return FileResult(source.path, source.kind, error="cannot parse: nesting too deep")
    except Exception as err:  # noqa: BLE001 - the isolation boundary: a bug in one rule must not hide other files' results
        DEBUG_LOG.debug("rocm-audit: internal error scanning %s:\n%s", visible(source.path), traceback.format_exc())
        return FileResult(source.path, source.kind, error=f"internal error: {type(err).__name__}: {err}")


def scan_text_as(
    path: str,
    kind: str,
    text: str,
    ctx: Rulebook | ScanContext,
    abspath: Path | None = None,
    encoding_note: str | None = None,
) -> FileResult:
    """Scan text as a file of the given kind (also used for rule examples)."""
    ctx = ScanContext.of(ctx)
    lines = text.splitlines()
    partial_reason = encoding_note
    try:
        outcome = _ENGINES[kind](path, text, lines, ctx, abspath)
    except (ManifestError, _ParseFailure) as err:
        return FileResult(path, kind, error=str(err))
    found, engine_facts, parse_note = outcome[:3]
    file_coverage = outcome[3] if len(outcome) > 3 else None   # cuda and cpp files count CUDA references
    partial_reason = partial_reason or parse_note
    incomplete = parse_note if isinstance(parse_note, Incomplete) else None
    suppressions = read_suppressions(text, ctx.derived(("suppression-ids",), ctx.suppression_ids))
    kept = [f for f in found if not suppressions.covers(f.rule_id, f.span.line)]
    facts = FileFacts(
        lines=len(lines),
        defines_kernels=kind in ("cuda", "cpp") and "__global__" in text,
        cpp_extension=bool(engine_facts and engine_facts.cpp_extension),
        rocm_build=PurePosixPath(path).name in BUILD_FILE_NAMES and bool(ROCM_BUILD.search(text)),
        partial_reason=partial_reason or "",
        unknown_suppressions=tuple(suppressions.unknown_ids),
        imports=engine_facts.imports if engine_facts else (),
        exports=engine_facts.exports if engine_facts else (),
        functions=engine_facts.functions if engine_facts else (),
        includes=engine_facts.includes if engine_facts else (),
    )
    return FileResult(
        path, kind,
        findings=tuple(sorted(kept, key=Finding.sort_key)),
        suppressed=len(found) - len(kept),
        partial=partial_reason is not None,
        error=incomplete,
        facts=facts,
        coverage=file_coverage,
    )


class _ParseFailure(ScannedFileError):
    pass


class Incomplete(str):
    """An engine's note for a file it could read only in part, too little to count as scanned (README
    "Threat model"): its findings are kept, and the file is reported as not scanned, which fails the gate."""


def _python(path, text, lines, ctx, abspath):
    from auditor.engines.python import EMBEDDED_CUDA_CALLS, scan_python
    from auditor.parsing.pyimports import unguarded_imports
    from auditor.parsing.python import PythonParseError, parse
    from auditor.prefilter import Haystack, python_gate

    note: str | None = None
    try:
        tree = parse(text)  # always: a syntax error is reported even where no rule could match
    except PythonParseError as err:
        from auditor.parsing.pyrecover import recover
        from auditor.parsing.python import PythonTree

        recovered = recover(text, f"cannot parse: {err}")   # the imports behind a bad line are still seen
        tree = PythonTree(recovered.module)
        note = recovered.note if recovered.whole else Incomplete(recovered.note)
    imports = unguarded_imports(tree.module)
    lowered = Haystack(text.lower())
    gate = python_gate(ctx, EMBEDDED_CUDA_CALLS)
    if PurePosixPath(path).name != "setup.py" and not gate.may_match(lowered):
        return [], FileFacts(imports=imports), note
    scan = scan_python(tree, ctx, path, lines, lowered)
    found = list(scan.findings)
    found.extend(requirement_findings(ctx.family("dependency"), scan.declared, path, lines))
    for embedded in scan.embedded:
        from auditor.engines.cuda import scan_cuda   # tree-sitter only when there is CUDA to parse
        from auditor.parsing import cuda as ts_cuda

        sub_tree = ts_cuda.parse(embedded.code.encode())
        hits = scan_cuda(sub_tree, ctx, path, "cuda", lines, line_offset=embedded.first_line - 1)
        found.extend(_guard_with(hits, scan.guarded))
    return found, FileFacts(cpp_extension=scan.uses_cpp_extension, imports=imports), note


def _guard_with(findings: list[Finding], guarded_line) -> list[Finding]:
    from auditor.engines import as_guarded

    return [
        as_guarded(f) if not f.guarded and guarded_line(f.span.line) else f
        for f in findings
    ]


def _notebook(path, text, lines, ctx, abspath):
    from auditor.parsing.python import PythonParseError, notebook_code

    try:
        code = notebook_code(text)
    except PythonParseError as err:
        raise _ParseFailure(f"cannot parse: {err}") from None
    code_lines = code.source.splitlines()
    found, facts, note = _python(path, code.source, code_lines, ctx, abspath)
    command_lines = [""] * len(code_lines)
    for number, command in code.shell_lines:
        command_lines[number - 1] = command
    content = pip_install_commands("\n".join(command_lines))
    found += list(requirement_findings(ctx.family("dependency"), content.declared, path, code_lines))
    out = []
    for f in found:
        line = f.span.line
        if line and 1 <= line <= len(code.cells):
            cell, cell_line = code.cells[line - 1]
            f = replace(f, span=Span(cell_line, f.span.column, cell_line), detail=f"cell {cell}, line {cell_line}")
        out.append(f)
    return out, facts, note


def _cuda(path, text, lines, ctx, abspath, kind="cuda"):
    """One parse, one inventory: the rules' matches and the HIPIFY reference count share them."""
    from auditor.engines.cuda import scan_cuda
    from auditor.engines.hipify import unsupported_findings
    from auditor.parsing import cuda as ts_cuda
    from auditor.parsing.guardmacros import NOTE as MACRO_NOTE
    from auditor.parsing.guardmacros import lines_guarded_by_project_macros
    from auditor.parsing.preproc import line_states
    from auditor.references import HAZARD_CATEGORIES, HAZARD_RULES, file_coverage, find_references, function_spans
    from auditor.xlang.exports import defined_functions, exports, quoted_includes

    tree = ts_cuda.parse(text.encode("utf-8", "replace"))
    inventory = ts_cuda.inventory(tree)
    states = line_states(text, ctx.guards.preprocessor)
    found = scan_cuda(tree, ctx, path, kind, lines, states=states, inventory=inventory)
    if by_macro := lines_guarded_by_project_macros(text, ctx.guards.preprocessor, states):
        found = [replace(f, disposition=PROJECT_MACRO, disposition_note=MACRO_NOTE)
                 if f.guarded and f.span.line in by_macro else f for f in found]
    references = find_references(inventory, ctx.table, states.dead)
    cuda_rules = ctx.family("cuda")
    hipify_rules = ctx.derived(("hipify-statuses", kind), lambda: tuple(
        r for r in cuda_rules if r.spec.hipify_status is not None and kind in r.spec.files))
    found += unsupported_findings(references, hipify_rules, found, states, path, lines, cuda_rules)
    categories = ctx.derived(("categories",), lambda: {r.id: r.category for r in ctx.rules})
    hazards = {f.span.line for f in found if not f.guarded and f.span.line
               and (categories.get(f.rule_id) in HAZARD_CATEGORIES or f.rule_id in HAZARD_RULES)}
    coverage = file_coverage(references, hazards, function_spans(inventory))
    functions = defined_functions(inventory.get("function", ()), inventory.get("call", ()), ts_cuda.text)
    linked = FileFacts(exports=exports(text), includes=quoted_includes(inventory, ts_cuda.text), functions=functions)
    return found, linked, tree.lost_text() or None, coverage


def _cpp(path, text, lines, ctx, abspath):
    return _cuda(path, text, lines, ctx, abspath, kind="cpp")


def _manifest(path, text, lines, ctx, abspath):
    flavour = manifest_flavour(path)
    content: ManifestContent = READERS[flavour](text) if flavour else ManifestContent()
    rules = ctx.family("dependency")
    found = list(requirement_findings(rules, content.declared, path, lines))
    found += url_findings(rules, content.urls, path, lines)
    found += _included(path, content, ctx, abspath, seen={path})
    return found, [], None


def _included(path, content, ctx, abspath, seen: set[str]) -> list[Finding]:
    """Follow `-r`/`-c` includes that discovery would not scan on its own: inside the scanned root only, regular
    files of bounded size only (an include of /dev/zero, /proc or ../../ outside the tree is not read)."""
    from auditor.boundedio import SMALL_CAP, UnsafeRead, read_bounded
    from auditor.discover import classify

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
        if not relative or relative in seen or classify(relative) == "manifest":
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
        found += _included(relative, inner, ctx, include_path, seen)
    return found


def _textual(path, text, lines, ctx, abspath, *, kind):
    found = scan_text(text, ctx, path, kind, lines)
    content = pip_install_commands(text)
    rules = ctx.family("dependency")
    found += requirement_findings(rules, content.declared, path, lines)
    found += url_findings(rules, content.urls, path, lines)
    return found, [], None


def _cython(path, text, lines, ctx, abspath):
    """The extern declarations through the CUDA engine (as C), the rest of the file through the text rules."""
    from auditor.parsing.cython import as_c

    found, _facts, _note, coverage = _cuda(path, as_c(text), lines, ctx, abspath, kind="cpp")
    found = list(found) + scan_text(text, ctx, path, "cython", lines)
    # Cython spellings C lacks (`vector[int]`, `cppclass`) leave syntax errors in the rewritten text: the C
    # parse is best effort by design, so it does not mark the file partial
    return found, [], None, coverage


def _conda(path, text, lines, ctx, abspath):
    """A conda recipe: its requirements through the dependency rules, its Jinja and selectors through the text
    rules. A line rendered only for a CUDA build variant (a `# [cuda_compiler_version != "None"]` selector or
    `{% if cuda_compiler_version != "None" %}` block) is optional: the recipe also builds without CUDA."""
    from auditor.parsing.conda_recipe import cuda_variant_lines, recipe_requirements

    found = scan_text(text, ctx, path, "conda", lines)
    found += requirement_findings(ctx.family("dependency"), recipe_requirements(text), path, lines)
    variant_only = cuda_variant_lines(text)
    return [replace(f, optional=True) if f.span.line in variant_only else f for f in found], [], None


def _yaml(path, text, lines, ctx, abspath):
    """A YAML file discovery did not place (a rule example, or a file named on the command line)."""
    from auditor.yamlkind import looks_like_k8s

    return _textual(path, text, lines, ctx, abspath, kind="k8s") if looks_like_k8s(text) else ([], [], None)


# What a file's scan reads of the preprocessor facts (the rulebook's `preprocessor` guards, with the project's
# macros): "none"; "text", only about names its decoded text contains (line_states over that text, see
# PreprocFacts.within); "embedded", all of them when the file may embed CUDA code (a Python call of
# EMBEDDED_CUDA_CALLS, found by the same needles as _python's gate), else none; any kind not listed, all of them
# (a notebook's cells and Cython's C are code derived from the text, not the text itself).
PREPROCESSOR_READ = {"cuda": "text", "cpp": "text", "python": "embedded", **dict.fromkeys(
    ("manifest", "build", "container", "ci", "shell", "k8s", "bazel", "conda", "yaml"), "none")}


def preprocessor_part(kind: str, text: str, facts: PreprocFacts) -> PreprocFacts | None:
    """The part of `facts` a scan of this kind of file with this text can read; None: any of them."""
    read = PREPROCESSOR_READ.get(kind, "all")
    if read == "embedded":
        from auditor.engines.python import EMBEDDED_CUDA_CALLS
        from auditor.prefilter import Haystack, Needles, name_needle

        read = "all" if Needles(map(name_needle, EMBEDDED_CUDA_CALLS)).may_match(Haystack(text.lower())) else "none"
    if read == "none":
        return PreprocFacts(frozenset(), frozenset(), frozenset())
    return facts.within(text) if read == "text" else None


_ENGINES = {
    "python": _python,
    "notebook": _notebook,
    "cuda": _cuda,
    "cpp": _cpp,
    "manifest": _manifest,
    "build": lambda *a: _textual(*a, kind="build"),
    "container": lambda *a: _textual(*a, kind="container"),
    "ci": lambda *a: _textual(*a, kind="ci"),
    "shell": lambda *a: _textual(*a, kind="shell"),
    "k8s": lambda *a: _textual(*a, kind="k8s"),
    "bazel": lambda *a: _textual(*a, kind="bazel"),
    "conda": _conda,
    "cython": _cython,
    "yaml": _yaml,
}
