"""Scan many files: cached results first, then in this process for a handful, across processes otherwise;
order is always by path."""
from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Sequence

from auditor.run.runner.cache import ResultCache, cacheable, content_digest
from auditor.run.runner.isolate import Watchdog, file_size, fork_available, over_budget, scan_in_children
from auditor.run.runner.memory import default_limit, limit_this_process, over_memory
from auditor.run.runner.progress import ScanProgress, Watcher
from auditor.match.rulebook import Rulebook
from auditor.match.rulebook.context import ScanContext
from auditor.run.runner.runcache import FileIndex, file_stat
from auditor.run.scan.file import MAX_FILE_BYTES, InputError, decode, read_bytes, scan_file
from auditor.types import FileResult, SourceFile

IN_PROCESS_BELOW = 24  # files; below this, starting workers costs more than it saves
DEFAULT_TIME_BUDGET = 60.0  # seconds per file
CHUNKS_PER_WORKER = 8      # enough that the last chunks to finish are small ones
MAX_CHUNK_FILES = 32
FILE_COST_BYTES = 4096     # a file's fixed cost (open, decode, set-up), counted as this many bytes
C_COST_FACTOR = 2          # a byte of C/C++ (tree-sitter, queries) costs about twice a byte of Python
# bytes of C/C++: reading more to learn which tree-sitter queries they need costs more than compiling them all
# (about 60 ms a megabyte against about 10 ms a query)
PLAN_FROM_TEXT_UP_TO = 3 << 20


class _OverBudget(BaseException):  # not an Exception: scan_file's own error handling must not catch it
    pass


def scan_with_budget(
    source: SourceFile, rulebook: ScanContext, max_bytes: int, budget: float, data: bytes | None = None
) -> FileResult:
    """scan_file, stopped after `budget` seconds (a pathological file must not stall the whole scan). In a
    worker or child process the watchdog (auditor/run/runner/isolate.py) also ends a scan stuck inside C code."""
    return with_budget(source, budget, lambda: scan_file(source, rulebook, max_bytes, data))


def with_budget(source: SourceFile, budget: float, scan: Callable[[], FileResult]) -> FileResult:
    """`scan()`, stopped after `budget` seconds (SIGALRM in the main thread, the watchdog in a child): the file's
    result, or its over-budget result."""
    if budget <= 0 or threading.current_thread() is not threading.main_thread():
        return scan()
    armed = [True]

    def on_alarm(signum, frame):
        if armed[0]:   # an alarm that arrives after the scan ended must not escape into the caller
            raise _OverBudget

    previous = signal.signal(signal.SIGALRM, on_alarm)
    try:   # armed inside the `try`: an alarm that fires at once (a tiny budget) is caught like any other
        Watchdog.arm(budget)
        signal.setitimer(signal.ITIMER_REAL, budget)
        result = scan()
        armed[0] = False
        return result
    except _OverBudget:
        armed[0] = False
        return over_budget(source, budget)
    except MemoryError:
        armed[0] = False
        return FileResult(source.path, source.kind, error=over_memory())
    finally:
        armed[0] = False
        Watchdog.disarm()
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _scan_and_save(
    source: SourceFile, rulebook: ScanContext, max_bytes: int, budget: float, cache: ResultCache | None
) -> FileResult:
    """Scan the bytes the cache key is made from, so a file edited meanwhile is never saved under an old key."""
    if cache is None:
        return scan_with_budget(source, rulebook, max_bytes, budget)
    try:
        data = read_bytes(source, max_bytes)
    except InputError as err:
        return FileResult(source.path, source.kind, error=str(err))
    result = scan_with_budget(source, rulebook, max_bytes, budget, data)
    if cacheable(source, data):
        digest = content_digest(data)
        cache.save(cache.key_for(source, digest), result, _key_within(source, cache, data, digest))
    return result


def _key_within(source: SourceFile, cache: ResultCache, data: bytes, digest: str) -> str | None:
    """ResultCache.key_within of the file's text as the scan decodes it."""
    if not cache.loose:
        return None
    try:
        text, _ = decode(data, source.kind)
    except InputError:
        return None
    return cache.key_within(source, digest, text)


def _cached(source: SourceFile, cache: ResultCache, max_bytes: int, index: FileIndex | None) -> FileResult | None:
    """The cached result: found by the file's stat when the index knows it (no read, no hash), else by content;
    else saved under other preprocessor facts that this file's scan does not read (kept under this run's key)."""
    stat = file_stat(source.abspath)
    digest = index.digest(source, stat) if index is not None else None
    data = None
    try:
        if digest is None:
            data = read_bytes(source, max_bytes)
            if not cacheable(source, data):
                return None
            digest = index.record(source, stat, data) if index is not None else content_digest(data)
        found = _load(cache, cache.key_for(source, digest))
        if found is None and cache.loose:
            data = read_bytes(source, max_bytes) if data is None else data
            if content_digest(data) != digest or not cacheable(source, data):   # changed since its stat
                return None
            second = _key_within(source, cache, data, digest)
            found = _load(cache, second) if second is not None else None
            if found is not None:
                cache.save(cache.key_for(source, digest), found)
    except InputError:
        return None  # the scan reports it
    return found


# Results this process loaded, by cache directory and key: an entry is never rewritten under its key (the key is
# everything the result depends on), so `history`, which looks up the same unchanged files at every point, reads
# and decodes each one once.
_LOADED: dict[tuple[str, str], FileResult] = {}
MAX_LOADED = 50_000


def _load(cache: ResultCache, key: str) -> FileResult | None:
    where = (str(cache.store.directory), key)
    found = _LOADED.get(where)
    if found is None and (found := cache.load(key)) is not None:
        if len(_LOADED) >= MAX_LOADED:
            _LOADED.clear()
        _LOADED[where] = found
    return found


class _Worker:
    """What each worker process holds for the whole scan."""

    rulebook: ScanContext
    max_bytes = MAX_FILE_BYTES
    budget = 0.0
    cache: ResultCache | None = None
    events = None                    # multiprocessing queue of (pid, path or None, size) for the progress bar


def _init_worker(rulebook: ScanContext, max_bytes: int, budget: float, cache: ResultCache | None, events,
                 memory: int) -> None:
    limit_this_process(memory)
    _Worker.rulebook, _Worker.max_bytes, _Worker.budget, _Worker.cache = rulebook, max_bytes, budget, cache
    _Worker.events = events
    Watchdog.start()


def _scan_chunk(chunk: list[SourceFile]) -> list[FileResult]:
    out = []
    events, pid = _Worker.events, os.getpid()
    for source in chunk:
        if events is not None:
            events.put((pid, source.path, 0))
        out.append(_scan_and_save(source, _Worker.rulebook, _Worker.max_bytes, _Worker.budget, _Worker.cache))
        if events is not None:
            events.put((pid, None, file_size(source)))
    return out


def c_sources(sources: Sequence[SourceFile]) -> list[SourceFile]:
    """The C/C++ files among these: the ones tree-sitter queries run on."""
    return [source for source in sources if source.kind in ("cuda", "cpp")]


def compile_queries(sources: Sequence[SourceFile], rulebook: ScanContext, max_bytes: int) -> None:
    """Compile, in this process, the tree-sitter queries scanning these files needs, all as one group: every worker
    forked afterwards inherits them. Once per set of files."""
    c_files = c_sources(sources)
    if not queries_to_compile(c_files, rulebook):
        return
    from auditor.match.engines.cuda import query_groups

    groups = query_groups(rulebook)
    _ = rulebook.table   # the HIPIFY API table too, loaded once here rather than in every worker
    _plan_queries(c_files, rulebook, max_bytes, _every_query(c_files))
    groups.compile_planned()
    groups.compiled_for |= frozenset(str(source.abspath) for source in c_files)


def queries_to_compile(sources: Sequence[SourceFile], rulebook: ScanContext) -> bool:
    """Whether scanning these files may still compile tree-sitter queries in this process: they hold C/C++, and
    neither were their queries compiled for them nor is every query compiled (as `history` does up front)."""
    c_files = c_sources(sources)
    if not c_files:
        return False
    from auditor.match.engines.cuda import query_groups

    groups = query_groups(rulebook)
    return not (frozenset(str(source.abspath) for source in c_files) <= groups.compiled_for
                or groups.covers(rulebook.family("cuda")))


def _every_query(sources: Sequence[SourceFile]) -> bool:
    return sum(file_size(source) for source in c_sources(sources)) > PLAN_FROM_TEXT_UP_TO


def _plan_queries(sources: Sequence[SourceFile], rulebook: ScanContext, max_bytes: int, every_query: bool) -> None:
    """Tell this process which tree-sitter queries these files will need, so that they are compiled together
    (one group of N queries compiles three times faster than N groups): every query when the scan has much
    C/C++ code, which needs most of them anyway; else what the text of these files asks for."""
    c_files = c_sources(sources)
    if not c_files:
        return
    from auditor.match.engines.cuda import queries_needed, query_groups

    groups = query_groups(rulebook)
    if every_query:
        groups.plan(rule for rule in rulebook.family("cuda") if getattr(rule.spec, "query", None) is not None)
        return
    for source in c_files:
        try:
            text = read_bytes(source, max_bytes).decode("utf-8", "replace")
        except InputError:
            continue
        groups.plan(queries_needed(rulebook, source.kind, text))


def _cost(source: SourceFile) -> int:
    return FILE_COST_BYTES + file_size(source) * (C_COST_FACTOR if source.kind in ("cuda", "cpp") else 1)


def chunks(sources: Sequence[SourceFile], jobs: int) -> list[list[SourceFile]]:
    """Chunks of about equal estimated cost, costliest files first: a huge file is a chunk of its own and the
    last chunks handed out are the cheapest, so no worker waits long for another at the end."""
    costed = sorted(((_cost(source), source) for source in sources), key=lambda item: -item[0])
    target = sum(cost for cost, _ in costed) / (max(1, jobs) * CHUNKS_PER_WORKER)
    out: list[list[SourceFile]] = []
    current: list[SourceFile] = []
    current_cost = 0
    for cost, source in costed:
        current.append(source)
        current_cost += cost
        if current_cost >= target or len(current) >= MAX_CHUNK_FILES:
            out.append(current)
            current, current_cost = [], 0
    if current:
        out.append(current)
    return out


def _balanced(sources: Sequence[SourceFile], bins: int) -> list[list[SourceFile]]:
    """Costliest first, each into the bin with the least cost so far."""
    loads = [0] * bins
    out: list[list[SourceFile]] = [[] for _ in range(bins)]
    for cost, source in sorted(((_cost(s), s) for s in sources), key=lambda item: -item[0]):
        lightest = loads.index(min(loads))
        out[lightest].append(source)
        loads[lightest] += cost
    return [chunk for chunk in out if chunk]


def _work_split(sources: Sequence[SourceFile], jobs: int) -> list[list[SourceFile]] | None:
    """How the files are shared among worker processes; None: scan them in this process."""
    if jobs <= 1 or len(sources) < 2:
        return None
    if len(sources) >= IN_PROCESS_BELOW:
        return chunks(sources, jobs)
    if c_sources(sources):
        # a few files, but C/C++ ones: scanning them costs more than starting workers
        return _balanced(sources, jobs)
    return None


def scan_all(
    sources: Sequence[SourceFile],
    rulebook: Rulebook | ScanContext,
    jobs: int,
    progress: ScanProgress | None = None,
    max_bytes: int = MAX_FILE_BYTES,
    time_budget: float = DEFAULT_TIME_BUDGET,
    cache: ResultCache | None = None,
    index: FileIndex | None = None,
    memory: int = 0,
) -> list[FileResult]:
    """`rulebook`: the run's scan context (a rulebook alone: its own, without project facts). `index`: the stat of
    each file with the digest of its bytes, to find cached results without reading. `memory`: the ceiling of each
    scanning process in bytes (auditor/run/runner/memory.py; 0: the default for `jobs`)."""
    rulebook = ScanContext.of(rulebook)
    memory = memory or default_limit(jobs)
    results: list[FileResult] = []
    todo = list(sources)
    if cache is not None:
        todo = []
        for source in sources:
            hit = _cached(source, cache, max_bytes, index)
            if hit is None:
                todo.append(source)
            else:
                results.append(hit)
                if progress:
                    progress.done(1, file_size(source))
    every_query = _every_query(todo)
    work = _work_split(todo, jobs)

    def scan_one(source: SourceFile) -> FileResult:
        return _scan_and_save(source, rulebook, max_bytes, time_budget, cache)

    def plan(chosen: Sequence[SourceFile]) -> None:
        _plan_queries(chosen, rulebook, max_bytes, every_query)

    if work is None and time_budget > 0 and todo and fork_available():
        # in a child the budget can stop a scan stuck inside C code (a regex, a parse): auditor/run/runner/isolate.py;
        # the queries compile here, so that the next run of this process (fix, history, a test) has them too
        compile_queries(todo, rulebook, max_bytes)
        results.extend(scan_in_children(todo, scan_one, time_budget, progress, plan, memory))
    elif work is None:
        plan(todo)
        for source in todo:
            results.append(scan_one(source))
            if progress:
                progress.done(1, file_size(source))
    else:
        finished, unfinished = _in_workers(work, rulebook, jobs, max_bytes, time_budget, cache, progress, memory)
        results.extend(finished)
        if unfinished:   # each retried in a child of its own run, so only the culprit is lost
            results.extend(scan_in_children(unfinished, scan_one, time_budget, progress, plan, memory))
    return sorted(results, key=lambda r: r.path)


def _in_workers(work, rulebook, jobs, max_bytes, time_budget, cache,
                progress, memory: int) -> tuple[list[FileResult], list[SourceFile]]:
    """The chunks scanned in a process pool: the results, and the files of chunks whose worker died (its
    watchdog ended a file stuck past its budget)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool
    from contextlib import nullcontext

    compile_queries([source for chunk in work for source in chunk], rulebook, max_bytes)
    # forked, never spawned: a spawned worker (Python's default on some systems) starts with the current directory
    # first on its path, and the workers inherit the queries compiled above
    context = multiprocessing.get_context("fork") if fork_available() else multiprocessing.get_context()
    events: multiprocessing.queues.Queue[object] | None = context.Queue() if progress else None
    initargs = (rulebook, max_bytes, time_budget, cache, events, memory)
    results: list[FileResult] = []
    unfinished: list[SourceFile] = []
    with Watcher(events, progress) if progress else nullcontext():
        with ProcessPoolExecutor(min(jobs, len(work)), mp_context=context, initializer=_init_worker,
                                 initargs=initargs) as pool:
            futures = [pool.submit(_scan_chunk, chunk) for chunk in work]
            for chunk, future in zip(work, futures):
                try:
                    results.extend(future.result())
                except BrokenProcessPool:
                    unfinished.extend(chunk)
    if events is not None:
        events.close()
    return results, unfinished
