"""Where the repositories' tasks run: here, at most `jobs` at a time (each task is a process of its own, see
tasks.scan_repository), or on an existing Dask distributed cluster, which runs the same task function."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from auditor.util.errors import ToolError
from auditor.cli.fleet.dasksecurity import SchedulerSecurity, client_security
from auditor.cli.fleet.tasks import (Outcome, RepoTask, failed, outcome_from_answer, scan_as_json, scan_repository,
                                 start_all, stop_all, task_to_json)

CONNECT_SECONDS = 30
DASK_HINT = "pip install 'rocm-audit[dask]'"

Done = Callable[[Outcome], None]


def run_local(tasks: Sequence[RepoTask], jobs: int, done: Done | None = None) -> list[Outcome]:
    """Each task's own process does the work; a thread here waits on each, so `jobs` scans run at once."""
    if not tasks:
        return []

    def one(task: RepoTask) -> Outcome:
        outcome = scan_repository(task)
        if done is not None:
            done(outcome)
        return outcome

    start_all()
    with ThreadPoolExecutor(max_workers=max(1, min(jobs, len(tasks)))) as pool:
        try:
            return list(pool.map(one, tasks))
        except BaseException:   # Ctrl-C: end the scans under way, and start no more
            pool.shutdown(wait=False, cancel_futures=True)
            stop_all()
            raise


def run_dask(tasks: Sequence[RepoTask], scheduler: str, done: Done | None = None,
             connect_seconds: float = CONNECT_SECONDS, security: SchedulerSecurity | None = None) -> list[Outcome]:
    """The tasks submitted to the Dask scheduler at `scheduler` (tls://host:port, or plain tcp:// on this
    machine or with `security.insecure`: cli/fleet/dasksecurity.py); its workers must have rocm-audit installed and
    see the local paths given (git URLs are fetched on the worker). A task goes out as JSON and its answer comes
    back as JSON, checked before use: the client takes no pickled result (`deserializers`: msgpack only)."""
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise ToolError(f"--executor dask needs Dask distributed: {DASK_HINT}") from None
    tls = client_security(scheduler, security or SchedulerSecurity())
    if not tasks:
        return []
    try:
        client = Client(scheduler, timeout=connect_seconds, security=tls, deserializers=["msgpack"])
    except (OSError, TimeoutError, ValueError) as err:
        raise ToolError(f"cannot reach the Dask scheduler at {scheduler}: {err}") from None
    outcomes: dict[str, Outcome] = {}
    with client:
        futures = client.map(scan_as_json, [task_to_json(task) for task in tasks], pure=False)
        by_key = {future.key: task for future, task in zip(futures, tasks)}
        for future in as_completed(futures):
            task = by_key[future.key]
            try:
                answer = outcome_from_answer(future.result(), task)
            except Exception as err:  # noqa: BLE001 - a worker lost or killed under the task: that row fails
                outcome = failed(task, f"the Dask task failed: {type(err).__name__}: {err}")
            else:
                outcome = answer or failed(task, "the Dask worker's answer is not an outcome of this task")
            outcomes[task.name] = outcome
            if done is not None:
                done(outcome)
    return [outcomes[task.name] for task in tasks]
