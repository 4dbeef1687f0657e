"""`history` reuses what it scanned at earlier points (results cached by content, found again when only the
project's build macros changed and a file never names them): every point must still be exactly what a cold scan
of that commit gives."""
from __future__ import annotations

from pathlib import Path

import pytest

from auditor.run.runner import workers as runner
from auditor.run.runner.cache import result_cache
from auditor.run.discover.files import discover
from auditor.match.rulebook import load_rulebook
from auditor.run.runner.workers import scan_all
from tests.history_repo import POINT_FIELDS, cold_point, history_points, linear_history

pytestmark = pytest.mark.slow   # scans of git histories

CMAKE = """cmake_minimum_required(VERSION 3.21)
project(gridops LANGUAGES CXX)
option(GRID_CUDA "Build the CUDA backend" OFF)
option(GRID_HIP "Build the HIP backend" OFF)
set(GRID_SOURCES src/reduce.cu src/plain.cu)
if(GRID_CUDA)
  enable_language(CUDA)
  add_library(gridops SHARED ${GRID_SOURCES})
elseif(GRID_HIP)
  enable_language(HIP)
  add_library(gridops SHARED ${GRID_SOURCES})
endif()
"""
# the HIP branch defines GRID_USE_HIP: reduce.cu's PTX in its #else is then guarded
CMAKE_DEFINES = CMAKE.replace("  add_library(gridops SHARED ${GRID_SOURCES})\nendif()",
                              "  add_library(gridops SHARED ${GRID_SOURCES})\n"
                              "  target_compile_definitions(gridops PRIVATE GRID_USE_HIP)\nendif()")
REDUCE = """__global__ void row_sum(const float* x, float* out, int n) {
  float v = x[blockIdx.x * n + threadIdx.x];
#ifdef GRID_USE_HIP
  v = __shfl_down(v, 1);
#else
  unsigned r;
  asm volatile("redux.sync.add.u32 %0, %1, 0xffffffff;" : "=r"(r) : "r"((unsigned)v));
  v = r;
#endif
  out[blockIdx.x] = v;
}
"""
PLAIN = """__global__ void fence(float* x) {
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  x[threadIdx.x] = __shfl_down_sync(0xffffffff, x[threadIdx.x], 16);
}
"""
EMBEDDED = '''from torch.utils.cpp_extension import load_inline
kernel = load_inline("k", cpp_sources="", cuda_sources="""
#ifndef GRID_USE_HIP
__global__ void k(unsigned* r) { asm volatile("redux.sync.add.u32 %0, %0, 0xffffffff;" : "+r"(*r)); }
#endif
""")
'''


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> tuple[Path, list[str]]:
    """Commits that change the build's macros with the sources unchanged, and sources with the build unchanged."""
    root = tmp_path_factory.mktemp("incremental") / "gridops"
    steps = [
        ({"CMakeLists.txt": CMAKE, "src/reduce.cu": REDUCE, "src/plain.cu": PLAIN,
          "app.py": "import torch\nimport pynvml\n", "requirements.txt": "torch\npynvml\n"}, "start"),
        ({"CMakeLists.txt": CMAKE_DEFINES}, "the HIP build defines GRID_USE_HIP"),
        ({"ext.py": EMBEDDED, "src/plain.cu": PLAIN.replace("16);", "16);\n  __syncwarp();")}, "an inline kernel"),
        ({"CMakeLists.txt": CMAKE}, "GRID_USE_HIP dropped again"),
        ({"app.py": "import torch\n", "requirements.txt": "torch\n"}, "pynvml removed"),
        ({"CMakeLists.txt": CMAKE_DEFINES, "src/reduce.cu": REDUCE.replace("out[", "x[0] = v;\n  out[")},
         "GRID_USE_HIP again, with a source change"),
    ]
    return root, linear_history(root, steps)


def test_every_point_is_what_a_cold_scan_of_its_commit_gives(project, tmp_path):
    root, ids = project
    points = history_points(root, tmp_path)
    assert [p["commit"] for p in points] == ids
    for point, commit_id in zip(points, ids):
        assert {k: point[k] for k in POINT_FIELDS} == cold_point(root, commit_id, tmp_path / "cold"), commit_id[:9]
    # the build's macro decides what counts: the points differ where a stale result would hide it
    # (reduce.cu's and ext.py's PTX is guarded exactly while the HIP build defines GRID_USE_HIP)
    assert [p["by_rule"].get("RA300", 0) for p in points] == [1, 0, 0, 2, 2, 0]
    assert [p["live"] for p in points] == [4, 3, 3, 5, 3, 1]


def test_a_file_is_scanned_again_only_when_it_names_a_macro_the_build_changed(tmp_path, monkeypatch):
    """The runner's second key: a C/C++ file that never names the changed macro is found in the cache; one that
    names it, and a Python file that embeds CUDA, are scanned again, and every result is a fresh scan's."""
    for name, text in {"src/reduce.cu": REDUCE, "src/plain.cu": PLAIN, "ext.py": EMBEDDED,
                       "app.py": "import pynvml\n"}.items():
        (tmp_path / "tree" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "tree" / name).write_text(text)
    files = discover([tmp_path / "tree"], tmp_path / "tree").files
    before = load_rulebook().own_context
    after = before.with_guards(before.guards.with_project_macros(frozenset({"GRID_USE_HIP"}), frozenset()))
    scanned: list[str] = []
    real = runner.scan_with_budget
    monkeypatch.setattr(runner, "scan_with_budget", lambda source, *a, **k: scanned.append(source.path) or real(
        source, *a, **k))
    scan_all(files, before, 1, cache=result_cache(tmp_path / "cache", before, 1 << 20, True), time_budget=0)
    assert sorted(scanned) == ["app.py", "ext.py", "src/plain.cu", "src/reduce.cu"]
    scanned.clear()
    cached = scan_all(files, after, 1, cache=result_cache(tmp_path / "cache", after, 1 << 20, True), time_budget=0)
    assert sorted(scanned) == ["ext.py", "src/reduce.cu"]
    assert cached == scan_all(files, after, 1, time_budget=0)
    assert [(r.path, f.rule_id, f.guarded) for r in cached for f in r.findings if f.rule_id == "RA300"] == [
        ("ext.py", "RA300", True), ("src/reduce.cu", "RA300", True)]
    scanned.clear()    # and back: each file's result under the first macros is still there
    scan_all(files, before, 1, cache=result_cache(tmp_path / "cache", before, 1 << 20, True), time_budget=0)
    assert scanned == []


def test_the_macro_pre_pass_answer_is_reused_only_for_the_same_files_with_the_same_bytes(tmp_path, monkeypatch):
    """The pre-pass keeps its answer under every C/C++ file's path and digest: the same tree reads one entry and
    no file; a changed #define, a file added or the guards changed give a fresh answer, as without a cache."""
    import os

    from auditor.run.runner import macros
    from auditor.run.runner.cache import EntryStore
    from auditor.run.runner.runcache import FileIndex

    tree = tmp_path / "tree"
    flags = "#if defined(__CUDA_ARCH__)\n#define HAS_PTX 1\n#endif\n"
    texts = {"include/flags.h": flags, "src/k.cu": "#include \"flags.h\"\n#ifdef HAS_PTX\n#endif\n"}
    own = load_rulebook().own_context.guards
    read: list[str] = []
    real = macros._file_part
    monkeypatch.setattr(macros, "_file_part", lambda source, *a: read.append(source.path) or real(source, *a))

    def answer(guards=own):
        for name, text in texts.items():
            (tree / name).parent.mkdir(parents=True, exist_ok=True)
            if not (tree / name).exists() or (tree / name).read_text() != text:
                (tree / name).write_text(text)
                os.utime(tree / name, ns=(946_684_800 * 10**9,) * 2)     # old: the index trusts its stat
        files = discover([tree], tree).files
        store = EntryStore(tmp_path / "cache")
        index = FileIndex.open(store, str(tree))
        read.clear()
        found = macros.project_macros(files, guards.preprocessor, 1 << 20, store, index, guards.as_data())
        index.save()
        files_read = sorted(read)
        assert found == macros.project_macros(files, guards.preprocessor, 1 << 20)    # what no cache gives
        return found, files_read

    assert answer() == ((frozenset({"HAS_PTX"}), {}), ["include/flags.h", "src/k.cu"])
    assert answer() == ((frozenset({"HAS_PTX"}), {}), [])                  # the same files: one entry read
    texts["include/flags.h"] = flags + "#define HAS_PTX 1\n"                # now defined on ROCm too
    assert answer() == ((frozenset(), {}), ["include/flags.h", "src/k.cu"])
    texts["src/more.cuh"] = "#if defined(__HIP_PLATFORM_AMD__)\n#define K_HIP 1\n#endif\n"
    assert answer()[0] == (frozenset(), {"K_HIP": 1})
    hip = own.with_project_macros(frozenset({"K_HIP"}), frozenset())
    assert answer(hip)[1] != []                                              # other guards: not the same answer
