"""scan_file: read once, parse once, run the engine of the file's kind (auditor/match/inputs/kinds.py). Never raises."""
from __future__ import annotations

import codecs
import io
import logging
import tokenize
import traceback
from pathlib import Path, PurePosixPath

from auditor.util.boundedio import read_prefix
from auditor.util.errors import ScannedFileError
from auditor.util.escape import visible
from auditor.match.inputs.engine import Incomplete, ParseFailure, ScanInput
from auditor.match.inputs.kinds import BY_NAME
from auditor.parse.manifest import ManifestError
from auditor.parse.sourcetext import compiler_text, source_lines
from auditor.truth.cpp import PreprocFacts
from auditor.truth.markers import rocm_build_file
from auditor.match.rulebook import Rulebook
from auditor.match.rulebook.context import ScanContext
from auditor.match.suppress import read_suppressions
from auditor.types import FileFacts, FileResult, Finding, SourceFile

MAX_FILE_BYTES = 16 * 1024 * 1024
DEBUG_LOG = logging.getLogger("rocm_audit")   # --debug shows it (auditor/cli/app.py): a file's internal error in full
BUILD_FILE_NAMES = {"setup.py", "CMakeLists.txt", "pyproject.toml", "Makefile", "setup.cfg"}


class InputError(ScannedFileError):
    """The file cannot be read as text; the message says why."""


LFS_POINTER = b"version https://git-lfs.github.com/spec/"   # what a checkout without LFS holds instead of the file


def decode(data: bytes, kind: str | None = None) -> tuple[str, str | None]:
    """Text and, when it was not plain UTF-8, how it was decoded. A kind whose language reads a coding
    declaration (`InputKind.coding_declaration`: PEP 263's `# -*- coding: utf-7 -*-`) is decoded as its
    interpreter decodes it; a declaration that cannot be honoured makes the file unreadable, never another text."""
    if data.startswith(LFS_POINTER):   # the real file is elsewhere: scanning the pointer would pass it unread
        raise InputError("a Git LFS pointer, not the file; check out with lfs: true (git lfs pull)")
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16", "replace"), "UTF-16"
    if b"\0" in data[:8192]:
        raise InputError("binary file (NUL bytes)")
    known = BY_NAME.get(kind) if kind is not None else None
    if known is not None and known.coding_declaration:
        declared = _declared_encoding(data)
        if declared is not None:
            return declared, None
    try:
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError:
        return data.decode("latin-1"), "Latin-1 (not valid UTF-8)"


def _declared_encoding(data: bytes) -> str | None:
    """The text as Python decodes it when its first two lines declare an encoding other than UTF-8 (None: they
    do not, and UTF-8 applies)."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as err:
        raise InputError(f"cannot decode: {err.msg if hasattr(err, 'msg') else err}") from None
    if codecs.lookup(encoding).name in ("utf-8", "utf-8-sig"):
        return None
    try:
        return data.decode(encoding)
    except (UnicodeDecodeError, LookupError, ValueError) as err:
        raise InputError(f"cannot decode as {encoding}, the encoding its coding declaration names: {err}") from None


def read_bytes(source: SourceFile, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    path = Path(source.abspath)
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise InputError(f"skipped: {size / 1e6:.1f} MB is over the {max_bytes / 1e6:.0f} MB file size limit")
        return read_prefix(path, max_bytes + 1)
    except OSError as err:
        raise InputError(f"cannot read: {err.strerror or err}") from None


def read_source(source: SourceFile, max_bytes: int = MAX_FILE_BYTES) -> tuple[str, str | None]:
    return decode(read_bytes(source, max_bytes), source.kind)


def scan_file(
    source: SourceFile, ctx: Rulebook | ScanContext, max_bytes: int = MAX_FILE_BYTES, data: bytes | None = None
) -> FileResult:
    """`data`: the file's bytes when the caller has read them already (read_bytes). `ctx`: the run's scan context
    (a rulebook alone scans with its own guards and no project facts)."""
    ctx = ScanContext.of(ctx)
    try:
        text, encoding_note = read_source(source, max_bytes) if data is None else decode(data, source.kind)
    except InputError as err:
        return FileResult(source.path, source.kind, error=str(err))
    try:
        return scan_text_as(source.path, source.kind, text, ctx, Path(source.abspath), encoding_note)
    except RecursionError:
        return FileResult(source.path, source.kind, error="cannot parse: nesting too deep")
    except MemoryError:
        raise    # over the scanning process's memory limit: the runner reports it (auditor/run/runner/memory.py)
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
    text = compiler_text(text)
    lines = source_lines(text)
    partial_reason = encoding_note
    try:
        outcome = BY_NAME[kind].engine.scan(ScanInput(path, text, lines, abspath), ctx)
    except (ManifestError, ParseFailure) as err:
        return FileResult(path, kind, error=str(err))
    found, engine_facts, parse_note = outcome.findings, outcome.facts, outcome.parse_note
    partial_reason = partial_reason or parse_note
    incomplete = parse_note if isinstance(parse_note, Incomplete) else None
    suppressions = read_suppressions(text, ctx.derived(("suppression-ids",), ctx.suppression_ids),
                                     BY_NAME[kind].comments)
    kept: list[Finding] = []
    silenced: list[tuple[Finding, int]] = []
    for f in found:
        marker = suppressions.covering(f.rule_id, f.span.line)
        if marker is None:
            kept.append(f)
        else:
            silenced.append((f, marker.line))
    facts = FileFacts(
        lines=len(lines),
        defines_kernels=BY_NAME[kind].c_family and "__global__" in text,
        cpp_extension=engine_facts.cpp_extension,
        rocm_build=PurePosixPath(path).name in BUILD_FILE_NAMES and rocm_build_file(text),
        partial_reason=partial_reason or "",
        unknown_suppressions=tuple(suppressions.unknown_ids),
        imports=engine_facts.imports,
        opt_in_lines=engine_facts.opt_in_lines,
        import_time=engine_facts.import_time,
        exports=engine_facts.exports,
        fenced_exports=engine_facts.fenced_exports,
        functions=engine_facts.functions,
        includes=engine_facts.includes,
        unread_rules=engine_facts.unread_rules,
    )
    return FileResult(
        path, kind,
        findings=tuple(sorted(kept, key=Finding.sort_key)),
        suppressed=len(silenced),
        partial=partial_reason is not None,
        error=incomplete,
        facts=facts,
        coverage=outcome.coverage,
        silenced=tuple(silenced),
    )


def preprocessor_part(kind: str, text: str, facts: PreprocFacts) -> PreprocFacts | None:
    """The part of `facts` a scan of this kind of file with this text can read (`InputKind.preprocessor_read`);
    None: any of them."""
    known = BY_NAME.get(kind)
    read = known.preprocessor_read if known is not None else "all"
    if read == "embedded":
        from auditor.match.engines.python import EMBEDDED_CUDA_CALLS
        from auditor.match.engines.python.cudasource import CUDA_SOURCE_NEEDLES
        from auditor.match.rulebook.prefilter import Haystack, Needles, name_needle

        needles = Needles([*map(name_needle, EMBEDDED_CUDA_CALLS), *CUDA_SOURCE_NEEDLES])
        read = "all" if needles.may_match(Haystack(text.lower())) else "none"
    if read == "none":
        return PreprocFacts(frozenset(), frozenset(), frozenset())
    return facts.within(text) if read == "text" else None
