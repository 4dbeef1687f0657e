"""One repository, one task: the ordinary single-repository audit (what `rocm-audit check --format json` runs),
its JSON report and the commit it was scanned at. `scan_repository` is the task both executors run: it audits
in a fresh process of its own (`python -m auditor.cli.fleet`, started by util/childpython.py) so that a timeout can
end it, whatever thread or daemonic worker process it is called from, and so that one repository's crash loses
only its own row."""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import threading
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from auditor.run.scan.file import MAX_FILE_BYTES   # files larger than check's default limit are not read out of git
from auditor.cli.fleet.clones import private_clone_dir
from auditor.cli.fleet.sources import UNSCANNED
from auditor.cli.fleet.gitsource import BrokenRepository, fetch_shallow, head_commit, repo_key, tree_of, url_key
from auditor.util.childpython import module_command
from auditor.util.vcs import TREE_CHECK_SECONDS, working_tree_changed

SCANNED, UNCHANGED, FAILED = "scanned", "unchanged", "failed"
STATUSES = (SCANNED, UNCHANGED, FAILED)
_RUNNING: set[subprocess.Popen] = set()   # the scans this process started and still waits on
_LOCK = threading.Lock()
# set by stop_all: a scan started while it ran (forked, not yet in _RUNNING) is ended by its own thread
_STOPPING = threading.Event()
MAX_REASON = 400


@dataclass(frozen=True, slots=True)
class RepoTask:
    name: str
    location: str                  # an absolute path or a git URL
    kind: str                      # "path" | "git" | a key of UNSCANNED (auditor/cli/fleet/sources.py)
    timeout: float                 # seconds for the whole repository, fetch included
    check_args: tuple[str, ...]    # flags every repository's `check` gets (cache, budgets, excludes)
    clone_dir: str                 # under which a git URL is fetched (bare, shallow) into a directory of its own
    resume_commit: str = ""        # with a kept report (resume.py): the commit and rules digest it was made
    resume_digest: str = ""        # at; the task answers `unchanged` when this run would produce that report


@dataclass(frozen=True, slots=True)
class Outcome:
    name: str
    source: str
    status: str                    # scanned | unchanged (resume: commit and digest of the kept report) | failed
    reason: str = ""               # why it failed
    commit: str | None = None      # the commit scanned (None: not a git repository)
    repo_key: str = ""             # what its runs are recorded under
    seconds: float = 0.0
    report: dict | None = None     # the `check --format json` report
    record: dict | None = None     # the run as the history store keeps it (history.record.RunRecord as a dict)
    dirty: bool = False            # scanned from a working tree with changes HEAD does not hold
    page: str | None = None        # the repository's own HTML report (`check --format html`), rendered where its
                                   # files were, so it shows the code around each finding

    def as_dict(self) -> dict:
        return asdict(self)


# an Outcome's fields as JSON has them: what a task's process (or a Dask worker) answers is checked against these
_ANSWER_TYPES: dict[str, tuple[type, ...]] = {
    "name": (str,), "source": (str,), "status": (str,), "reason": (str,), "commit": (str, type(None)),
    "repo_key": (str,), "seconds": (int, float), "report": (dict, type(None)), "record": (dict, type(None)),
    "dirty": (bool,), "page": (str, type(None))}
_COMMIT = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")


def task_to_json(task: RepoTask) -> str:
    return json.dumps(asdict(task))


def task_from_json(text: str | bytes) -> RepoTask:
    given = json.loads(text)
    return RepoTask(**{**given, "timeout": float(given["timeout"]), "check_args": tuple(given["check_args"])})


def outcome_from_answer(text: str | bytes, task: RepoTask) -> Outcome | None:
    """The Outcome a task's JSON answer holds, when it is one, for `task`, with every field of its type (plain
    data only: nothing is unpickled or imported); else None."""
    try:
        data = json.loads(text)
    except (ValueError, TypeError):
        return None
    if not isinstance(data, dict) or set(data) != set(_ANSWER_TYPES):
        return None
    if any(not isinstance(data[name], kinds) or (isinstance(data[name], bool) and bool not in kinds)
           for name, kinds in _ANSWER_TYPES.items()):
        return None
    if (data["name"], data["source"]) != (task.name, task.location) or data["status"] not in STATUSES or \
            (data["commit"] is not None and not _COMMIT.fullmatch(data["commit"])):
        return None
    return Outcome(**data)


def scan_as_json(request: str) -> str:
    """The task a Dask worker runs: a RepoTask as JSON in, its Outcome as JSON out, so that only plain data
    crosses between the cluster and the driver (which checks the answer with outcome_from_answer)."""
    return json.dumps(scan_repository(task_from_json(request)).as_dict(), ensure_ascii=False)


def failed(task: RepoTask, reason: str, seconds: float = 0.0) -> Outcome:
    return Outcome(task.name, task.location, FAILED, reason[:MAX_REASON], seconds=round(seconds, 3))


def scan_repository(task: RepoTask) -> Outcome:
    """`audit_repository` in a child process, ended (with everything it started) after `task.timeout`; a local
    repository that resumes is answered here, without one."""
    if task.kind in UNSCANNED:   # nothing to start a process for
        return audit_repository(task)
    if task.kind == "path" and task.resume_commit:
        resumed = _unchanged_here(task)
        if resumed is not None:
            return resumed
        task = replace(task, resume_commit="", resume_digest="")   # decided: the child scans it
    started = time.monotonic()
    request = task_to_json(task).encode("utf-8")
    child = subprocess.Popen(module_command("auditor.cli.fleet"), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, start_new_session=True)
    with _LOCK:
        _RUNNING.add(child)
        stopping = _STOPPING.is_set()
    if stopping:
        _kill_group(child, wait=False)
    try:
        out, err = child.communicate(request, timeout=task.timeout)
    except subprocess.TimeoutExpired:
        _kill_group(child)
        return failed(task, f"timed out after {task.timeout:g} s", time.monotonic() - started)
    finally:
        with _LOCK:
            _RUNNING.discard(child)
    seconds = time.monotonic() - started
    answer = outcome_from_answer(out, task)
    if answer is not None:
        return replace(answer, seconds=round(seconds, 3))
    last = err.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit status {child.returncode}"]
    return failed(task, f"the scan process ended without a report: {last[0]}", seconds)


def _kill_group(child: subprocess.Popen, wait: bool = True) -> None:
    try:
        os.killpg(child.pid, signal.SIGKILL)   # its own session: the per-file children it forked go too
    except ProcessLookupError:
        pass
    if wait:
        child.communicate()


def start_all() -> None:
    """A run of scans begins: none is being stopped."""
    _STOPPING.clear()


def stop_all() -> None:
    """End every scan this process started (an interrupted fleet run): in their own sessions, they would not
    get the terminal's Ctrl-C. A scan whose process is forked but not yet listed ends itself (`_STOPPING`)."""
    _STOPPING.set()
    with _LOCK:
        running = list(_RUNNING)
    for child in running:
        _kill_group(child, wait=False)


def audit_repository(task: RepoTask) -> Outcome:
    """In this process: the repository's report, or a failed outcome saying why (never an exception)."""
    from auditor.util.boundedio import UnsafeRead
    from auditor.config import ConfigError
    from auditor.util.errors import ToolError
    from auditor.cli.settings import UsageError
    from auditor.util.vcs import GitError

    try:
        if task.kind in UNSCANNED:
            return failed(task, UNSCANNED[task.kind])
        if task.kind == "git":
            return _audit_fetched(task)
        return _audit_local(task)
    except (BrokenRepository, ToolError, GitError, UsageError, ConfigError, UnsafeRead, OSError) as err:
        return failed(task, str(err))
    except Exception as err:  # noqa: BLE001 - a repository that breaks the tool is its own row, not the fleet's end
        return failed(task, f"internal error: {type(err).__name__}: {err}")


def _audit_fetched(task: RepoTask) -> Outcome:
    with private_clone_dir(Path(task.clone_dir)) as scratch:
        bare, fetched = fetch_shallow(task.location, scratch)
        key = url_key(task.location)
        if task.resume_commit == fetched and _fetched_digest(bare, fetched, task.check_args) == task.resume_digest:
            return Outcome(task.name, task.location, UNCHANGED, commit=fetched, repo_key=key)
        where = _where_fetched(bare, fetched, task)
        with tree_of(bare, fetched, MAX_FILE_BYTES) as files:
            report, record, page = check_report(files, task.check_args, shown_root=task.name, where=where)
    return Outcome(task.name, task.location, SCANNED, commit=fetched, repo_key=key, report=report, record=record,
                   page=page)


def _unchanged_here(task: RepoTask) -> Outcome | None:
    """Resume of a local repository, decided in this process (the fleet's thread, or the Dask worker's): its
    HEAD, the digest its settings give and a clean working tree (git's answer bounded in time). None when it
    must be scanned, or on any doubt: the scan's own process meets the problem and says why."""
    from auditor.history.command import repository

    started = time.monotonic()
    path = Path(task.location)
    try:
        commit = head_commit(path)
        if commit != task.resume_commit or run_digest(path, task.check_args) != task.resume_digest or \
                working_tree_changed(path, min(task.timeout, TREE_CHECK_SECONDS)):
            return None
        key = repository(path)[2]
    except Exception:  # noqa: BLE001 - not resumed; whatever failed here is the scan's to report
        return None
    return Outcome(task.name, task.location, UNCHANGED, commit=commit, repo_key=key,
                   seconds=round(time.monotonic() - started, 3))


def _audit_local(task: RepoTask) -> Outcome:
    from auditor.history.record import of_working_tree

    path = Path(task.location)
    commit = head_commit(path)
    where = _where_local(path) if commit is not None else None
    dirty = commit is not None and working_tree_changed(path, min(task.timeout, TREE_CHECK_SECONDS))
    recorded_as = of_working_tree(where) if dirty and where is not None else where
    report, record, page = check_report(path, task.check_args, where=recorded_as)
    return Outcome(task.name, task.location, SCANNED, commit=commit, repo_key=where.repo if where else
                   repo_key(path, commit), report=report, record=record, dirty=dirty, page=page)


def _fetched_digest(bare: Path, commit: str, check_args: tuple[str, ...]) -> str:
    """The digest a scan of `commit` would record: its settings come from the fleet's flags and the configuration
    at the top of its tree, so those files alone are read out of git."""
    from auditor.config import CONFIG_FILE, PYPROJECT
    from auditor.util.vcs import base_tree

    with base_tree(bare, commit, [CONFIG_FILE, PYPROJECT], MAX_FILE_BYTES) as config_only:
        return run_digest(config_only, check_args)


def _where_local(path: Path):
    """The repository key and commit a local repository's runs are recorded under: the history store's own
    (its root commit, plus the subdirectory), so `check --record`, `history` and `fleet` share its points."""
    from auditor.history.command import repository, where_of

    top, prefix, key = repository(path)
    return where_of(top, prefix, key)


def _where_fetched(bare: Path, commit: str, task: RepoTask):
    """A fetched URL is a shallow clone: recorded under its URL, as `history` records a shallow clone."""
    from auditor.history.gitobjects import commit_info
    from auditor.history.record import Where

    info = commit_info(bare, commit)
    return Where(url_key(task.location), task.name, info.id, info.committed_at, info.author)


def _check_settings(path: Path, check_args: tuple[str, ...]):
    """The settings of `rocm-audit check PATH --format json` with the fleet's flags (and PATH's own config)."""
    from auditor.cli.settings import check_settings

    return check_settings([str(path), "--format", "json", "--no-html", "--no-progress", "-j", "1", *check_args])


def run_digest(path: Path, check_args: tuple[str, ...]) -> str:
    """The rules digest a scan of `path` records (history.command.rules_digest), without scanning."""
    from auditor.history.command import rules_digest
    from auditor.run.invocation.runsetup import rulebook_for

    settings = _check_settings(path, check_args)
    return rules_digest(settings, rulebook_for(settings))


def check_report(path: Path, check_args: tuple[str, ...], shown_root: str | None = None,
                 where=None) -> tuple[dict, dict | None, str]:
    """What `rocm-audit check PATH --format json` reports, built the way `check` builds it, with `where`
    (history.record.Where) the run as the history store keeps it, and the HTML page of the same report."""
    from auditor.report.formats import RenderOptions, render
    from auditor.run.invocation.runsetup import rulebook_for, scan_options
    from auditor.run.invocation.scanning import audit_tree
    from auditor.report.json import report_dict

    settings = _check_settings(path, check_args)
    options = scan_options(settings)
    rulebook = rulebook_for(settings)
    report = audit_tree(settings.scope.paths, rulebook, options, shown_root=shown_root)
    record = None
    if where is not None:
        from dataclasses import asdict

        from auditor.history.command import rules_digest
        from auditor.history.record import run_record

        record = asdict(run_record(report, where, rules_digest(settings, rulebook), source="fleet"))
    return report_dict(report), record, render("html", report, RenderOptions(source_root=path))
