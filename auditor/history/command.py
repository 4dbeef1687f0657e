"""`rocm-audit history [PATH]` and `check --record`: scan sampled commits from git objects into the store, and
show the trend; the Progress section of the normal report."""
from __future__ import annotations

import hashlib
import json
import shutil
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from auditor.util import vcs
from auditor.util.errors import ToolError
from auditor.history import gitobjects, render, sample
from auditor.history.listing import Kinds, discovered_point
from auditor.history.record import RunRecord, Where, of_working_tree, run_record
from auditor.history.store import StoreError, open_store
from auditor.history.warm import warm_scanner
from auditor.run.invocation.output import write_or_print


def rules_digest(settings, rulebook) -> str:
    """What a recorded point depends on besides the tree: rocm-audit's code, the rules, the options that change
    results. A point recorded under another digest is scanned again."""
    from auditor.run.runner.cache import scan_context

    scope = settings.scope
    choices = [scope.exclude, scope.include_vendored, scope.max_file_size, settings.rules.per_file_ignores,
               scope.optional_dirs]
    text = scan_context(rulebook, scope.max_file_size) + json.dumps(choices, default=str)
    return hashlib.blake2b(text.encode(), digest_size=12).hexdigest()


def repository(path: Path) -> tuple[Path, str, str]:
    """(top, prefix of `path` in it ("" for the top), repository key: root commit or remote, plus the prefix)."""
    top = vcs.toplevel(path, needed_by="")
    directory = path if path.is_dir() else path.parent
    prefix = directory.resolve().relative_to(top.resolve()).as_posix()
    prefix = "" if prefix == "." else prefix
    key = gitobjects.repo_key(top)
    if not key:
        raise vcs.GitError(f"{path}: the repository has no commit yet")
    return top, prefix, key + (f":{prefix}" if prefix else "")


def where_of(top: Path, prefix: str, key: str, rev: str = "HEAD") -> Where:
    commit = gitobjects.commit_info(top, rev)
    label = top.name + (f"/{prefix}" if prefix else "")
    return Where(key, label, commit.id, commit.committed_at, commit.author)


def record_and_progress(settings, report, root: Path, rulebook):
    """For `check`: append the run when --record asks, then the Progress view for an HTML report when the store
    holds points of this repository (read-only; a default database that cannot be read is skipped with a
    warning, one named with --db is an error)."""
    options, shown = settings.recording, settings.reporting
    wants_html = shown.format == "html" or any(fmt == "html" for fmt, _ in shown.outputs) or (
        shown.format == "terminal" and not shown.output and sys.stdout.isatty() and not shown.no_html)
    if not options.record and not wants_html:
        return None
    try:
        top, prefix, key = repository(root)
    except (vcs.GitError, ValueError) as err:
        if options.record:
            raise ToolError(f"--record needs a git repository: {err}") from None
        return None
    if options.record:
        where = where_of(top, prefix, key)
        if vcs.working_tree_changed(root):
            print("rocm-audit: note: the working tree holds changes its commit does not: this run is recorded as "
                  "no commit's (history shows commits' runs)", file=sys.stderr)
            where = of_working_tree(where)
        with open_store(options.db) as store:
            store.record(run_record(report, where, rules_digest(settings, rulebook), source="check"))
    if not wants_html:
        return None
    try:
        with open_store(options.db, readonly=True) as store:
            points = store.points(key)
    except StoreError as err:
        if options.db is not None:
            raise
        print(f"rocm-audit: warning: no Progress section: {err}", file=sys.stderr)
        return None
    return render.progress(points[-1].where.label, points) if points else None


def history_command(settings) -> int:
    from auditor.run.invocation.runsetup import rulebook_for, scan_options

    options = settings.history
    path = settings.scope.paths[0] if settings.scope.paths else Path(".")
    if len(settings.scope.paths) > 1:
        raise ToolError("history takes one path (a repository or a directory in one)")
    if not path.exists():
        raise ToolError(f"path does not exist: {path}")
    try:
        top, prefix, key = repository(path)
        vcs.clean_stale()
        until = gitobjects.resolve(top, options.until or "HEAD")
        commits = gitobjects.first_parent(top, until)
        notes = []
        if gitobjects.is_shallow(top):
            notes.append(f"shallow clone: {len(commits)} commit{'s' if len(commits) != 1 else ''} of history "
                         "available (git fetch --unshallow for the rest)")
        chosen = _in_range(top, commits, options.since)
        chosen = sample.sample(chosen, gitobjects.tagged(top), options.max_points)
    except vcs.GitError as err:
        raise ToolError(f"history: {err}") from None
    for note in notes:
        print(f"rocm-audit: {note}", file=sys.stderr)
    rulebook = rulebook_for(settings)
    digest = rules_digest(settings, rulebook)
    label = top.name + (f"/{prefix}" if prefix else "")
    points = _points(settings, top, prefix, key, label, chosen, rulebook, digest, scan_options(settings))
    fmt = settings.format
    if fmt == "json":
        text = render.render_json(key, label, points)
    elif fmt == "csv":
        text = render.render_csv(points)
    elif fmt == "html":
        from auditor.report.html import render_progress_page

        text = render_progress_page(render.progress(label, points))
    else:
        text = render.render_terminal(label, points, notes)
    write_or_print(text, settings.output)
    return 0


def _in_range(top: Path, commits: list[gitobjects.Commit], since: str | None) -> list[gitobjects.Commit]:
    if since is None:
        return commits
    date = sample.as_date(since)
    if date is not None:
        return sample.in_range(commits, date, None)
    start = gitobjects.resolve(top, since)
    found = sample.in_range(commits, None, start)
    if not found:
        raise vcs.GitError(f"--since {since}: not on the first-parent history of --until")
    return found


def _points(settings, top, prefix, key, label, chosen, rulebook, digest, scan_options) -> list[RunRecord]:
    """Each chosen commit's run: reused from the store when recorded with the same digest, else scanned from
    git objects and recorded (one transaction each: an interrupted run keeps the points already done)."""
    from auditor.run.pipeline import audit

    scan_options = replace(scan_options, whole_run_cache=False, across_macros=True)
    cache_dir = scan_options.cache_dir
    private = None
    if cache_dir is None:          # --no-cache: a private cache for this run, so unchanged files scan once
        private = Path(tempfile.mkdtemp(prefix="rocm-audit-history-cache-"))
        scan_options = replace(scan_options, cache_dir=private)
    shown = not settings.quiet and sys.stderr.isatty()
    points: list[RunRecord] = []
    warmed = False
    kinds: Kinds = {}
    try:
        with open_store(settings.history.db) as store, \
                gitobjects.TreeWriter(top, scan_options.max_file_size) as writer:
            for number, commit in enumerate(chosen, 1):
                known = store.run_for(key, commit.id, digest)
                if known is not None:
                    points.append(known)
                    continue
                started = time.perf_counter()
                if not warmed:
                    warm_scanner(rulebook)
                    warmed = True
                problems = writer.show(commit.id)
                root = writer.root / prefix if prefix else writer.root
                root.mkdir(parents=True, exist_ok=True)
                discovered = discovered_point(writer.tree, writer.written, prefix, root, scan_options, kinds)
                report = audit([root], rulebook, scan_options, shown_root=label, root=root, discovered=discovered)
                where = Where(key, label, commit.id, commit.committed_at, commit.author)
                run = run_record(report, where, digest, source="history")
                if problems:
                    run = replace(run, complete=False)
                store.record(run)
                points.append(run)
                if shown:
                    print(f"rocm-audit: history {number}/{len(chosen)} {commit.id[:9]} "
                          f"({time.perf_counter() - started:.1f} s)", file=sys.stderr)
    except vcs.GitError as err:
        raise ToolError(f"history: {err}") from None
    finally:
        if private is not None:
            shutil.rmtree(private, ignore_errors=True)
    return points
