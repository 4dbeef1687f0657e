"""Where a report goes: rendered through the format registry (auditor/report/formats.py) into the files asked
for and standard output, the interactive run's HTML page in the user's cache directory, every file written
atomically."""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from auditor.util.errors import ToolError
from auditor.report.formats import RenderOptions, render


def bundled_example() -> Path:
    import importlib.resources

    return Path(str(importlib.resources.files("auditor") / "example"))


def render_options(settings, root: Path | None = None, progress=None) -> RenderOptions:
    """The settings' rendering choices. `root`: where the scanned files are, for the code the HTML report shows
    around each finding; `progress`: the recorded history for its Progress section (auditor/history)."""
    shown = settings.reporting
    return RenderOptions(fail_on=settings.gate.fail_on, quiet=shown.quiet, verbose=shown.verbose, source_root=root,
                         progress=progress, sarif_all=shown.sarif_all)


def emit(settings, report, root: Path | None = None, progress=None) -> None:
    """The files asked for with --html/--sarif/--json/--markdown FILE, then the main format (-o FILE or stdout);
    in an interactive terminal run, also the HTML report in the current directory."""
    options = render_options(settings, root, progress)
    shown = settings.reporting
    for fmt, path in shown.outputs:
        write_atomic(path, render(fmt, report, options))
    if shown.format != "terminal" or shown.output:
        write_or_print(render(shown.format, report, options), shown.output)
        return
    from auditor.report.terminal.console import print_line, print_terminal

    print_terminal(report, shown.quiet, settings.gate.fail_on, shown.verbose)
    default_html = default_html_path(settings, sys.stdout.isatty())
    if default_html is not None:
        write_atomic(default_html, render("html", report, options))
        print_line(f"HTML report: {default_html.absolute()}")


def default_html_path(settings, interactive: bool) -> Path | None:
    """An interactive run writes the HTML report unless told not to or given --html FILE: in the user's cache
    directory (a temporary directory when that lies in the scanned tree or cannot be made), never in the
    scanned repository as an untracked file. `--html rocm-audit-report.html` puts it in the current one."""
    shown = settings.reporting
    asked = any(fmt == "html" for fmt, _ in shown.outputs)
    if not interactive or shown.no_html or shown.quiet or asked or shown.format != "terminal":
        return None
    import hashlib

    from auditor.run.runner.cache import default_directory
    from auditor.run.discover.files import common_root

    scanned = (bundled_example(),) if settings.example else (settings.scope.paths or (Path("."),))
    top = common_root(scanned)
    name = f"{top.name or 'root'}-{hashlib.blake2b(str(top).encode(), digest_size=4).hexdigest()}.html"
    directory = default_directory() / "reports"
    inside = any(directory.resolve().is_relative_to(p.resolve()) for p in scanned if p.is_dir())
    try:
        if inside:
            raise OSError("the cache directory lies in the scanned tree")
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError:
        directory = Path(tempfile.mkdtemp(prefix="rocm-audit-report-"))   # private, made for this run
    return directory / name


def write_or_print(text: str, output: Path | None) -> None:
    if output is None:
        sys.stdout.write(text)
        return
    write_atomic(output, text)


def write_atomic(path: Path, text: str) -> None:
    """Write through a temporary file in the same directory, so readers never see half a report. A target that
    exists and is not a regular file (`/dev/null`, a FIFO, `/dev/stdout`) is written in place, never replaced."""
    import stat

    try:
        mode = path.stat().st_mode
    except OSError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        if stat.S_ISDIR(mode):
            raise ToolError(f"cannot write {path}: it is a directory")
        try:
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(text)
        except OSError as err:
            raise ToolError(f"cannot write {path}: {err.strerror or err}") from None
        return
    directory = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=directory)
    except OSError as err:
        raise ToolError(f"cannot write {path}: {err.strerror or err}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(tmp, 0o666 & ~_umask())   # mkstemp makes it private; a report is as readable as any new file
        os.replace(tmp, path)
    except OSError as err:
        Path(tmp).unlink(missing_ok=True)
        raise ToolError(f"cannot write {path}: {err.strerror or err}") from None


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
