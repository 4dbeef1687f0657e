"""Sharing files among worker processes (auditor/run/runner/workers.py): balanced chunks, and the same results in path order
however the files were scanned or taken from the cache."""
from auditor.run.runner.cache import result_cache
from auditor.run.discover.files import discover
from auditor.match.rulebook import load_rulebook
from auditor.run.runner.workers import IN_PROCESS_BELOW, MAX_CHUNK_FILES, _work_split, chunks, scan_all
from auditor.types import SourceFile
from tests.conftest import write_tree

RULEBOOK = load_rulebook()


def sources(root, files: dict[str, str]) -> tuple[SourceFile, ...]:
    write_tree(root, files)
    return discover([root], root).files


def test_a_huge_file_is_a_chunk_of_its_own_and_comes_first(tmp_path):
    files = {f"small/{i:03}.py": "import os\n" for i in range(200)}
    files["big/generated.cu"] = "__global__ void k() {}\n" * 20_000
    found = sources(tmp_path, files)
    shared = chunks(found, jobs=2)
    assert [s.path for s in shared[0]] == ["big/generated.cu"]
    assert sorted(s.path for chunk in shared for s in chunk) == sorted(s.path for s in found)
    assert max(len(chunk) for chunk in shared) <= MAX_CHUNK_FILES


def test_a_few_files_stay_in_process_unless_some_are_c_sources(tmp_path):
    """Compiling tree-sitter queries costs more than starting workers: C/C++ files are shared out."""
    python_only = sources(tmp_path / "py", {"a.py": "", "b.py": ""})
    kernel = "__global__ void k(float* x) { x[threadIdx.x] *= 2.0f; }\n" * 500
    mixed = sources(tmp_path / "mixed", {"a.py": "", "one.cu": kernel, "two.cu": kernel, "requirements.txt": "numpy\n"})
    assert _work_split(python_only, jobs=2) is None
    assert _work_split(mixed, jobs=1) is None
    shared = _work_split(mixed, jobs=2)
    assert sorted(s.path for chunk in shared for s in chunk) == sorted(s.path for s in mixed)
    assert [[s.path for s in chunk if s.kind == "cuda"] for chunk in shared] == [["one.cu"], ["two.cu"]]


def test_results_are_in_path_order_whatever_was_cached_or_scanned_in_parallel(tmp_path):
    files = {f"pkg/m{i:02}.py": f"import pynvml  # {i}\n" for i in range(IN_PROCESS_BELOW + 6)}
    files.update({f"csrc/k{i}.cu": f"__global__ void k{i}(unsigned* m) {{ m[0] = __ballot_sync(0xffffffff, 1); }}\n"
                  for i in range(4)})
    found = sources(tmp_path / "repo", files)
    expected = scan_all(found, RULEBOOK, jobs=1)
    cache = result_cache(tmp_path / "cache", RULEBOOK, 16 << 20)
    scan_all(found[::3], RULEBOOK, jobs=1, cache=cache)      # a third of them cached
    assert scan_all(found, RULEBOOK, jobs=2, cache=cache) == expected
    assert scan_all(found, RULEBOOK, jobs=2, cache=cache) == expected   # all of them cached
    assert [r.path for r in expected] == sorted(r.path for r in expected)


class Recorder:
    def __init__(self):
        self.files, self.bytes, self.slow_files = 0, 0, []

    def done(self, files, nbytes):
        self.files += files
        self.bytes += nbytes

    def slow(self, path, seconds):
        if path is not None:
            self.slow_files.append(path)


def test_progress_counts_every_file_and_its_bytes_from_the_workers_and_the_cache(tmp_path):
    files = {f"pkg/m{i:02}.py": f"import pynvml  # {i}\n" for i in range(IN_PROCESS_BELOW + 6)}
    files["csrc/k.cu"] = "__global__ void k(unsigned* m) { m[0] = __ballot_sync(0xffffffff, 1); }\n"
    found = sources(tmp_path / "repo", files)
    size = sum(len(text.encode()) for text in files.values())
    cache = result_cache(tmp_path / "cache", RULEBOOK, 16 << 20)
    for _ in range(2):   # scanned in two workers, then all from the cache
        seen = Recorder()
        scan_all(found, RULEBOOK, jobs=2, progress=seen, cache=cache)
        assert (seen.files, seen.bytes) == (len(files), size)


def test_the_file_a_worker_is_stuck_on_is_named(monkeypatch):
    import queue
    import time

    from auditor.run.runner import progress
    monkeypatch.setattr(progress, "SLOW_FILE_SECONDS", 0.0)
    events, seen = queue.Queue(), Recorder()
    with progress.Watcher(events, seen):
        events.put((101, "fast.cu", 0))
        events.put((101, None, 10))
        events.put((102, "generated/huge.cu", 0))
        deadline = time.monotonic() + 30
        while not seen.slow_files and time.monotonic() < deadline:
            time.sleep(0.01)
    assert seen.slow_files[0] == "generated/huge.cu"
    assert (seen.files, seen.bytes) == (1, 10)


def test_a_scan_the_alarm_stops_in_process_is_reported_as_over_the_budget(tmp_path):
    """The SIGALRM path (a worker's main thread): the file is reported as skipped, the run goes on."""
    from auditor.run.runner.workers import scan_with_budget

    kernel = "__global__ void k(float* x) { x[threadIdx.x % 32] *= 2.0f; }\n" * 4000
    (source,) = sources(tmp_path, {"big.cu": kernel})
    result = scan_with_budget(source, RULEBOOK, max_bytes=16 << 20, budget=0.001)
    assert result.path == "big.cu" and result.findings == ()
    assert result.error == "skipped: scanning took over the 0.001 s per-file time budget"
