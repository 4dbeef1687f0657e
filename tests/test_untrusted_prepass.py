"""The build pre-pass stays in its tree and under its budget: a build file cannot make it walk or read outside the
scanned root, every reader finishes on 2 MB adversarial build files (their seconds are measured by
scripts/bench_prepass.py, not here: a quadratic reader shows as a test that never ends), deep nesting makes one
file partial rather than failing the run, and the pre-pass stops at its deadline, saying which files it did not
read."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from auditor.run.discover.files import discover
from auditor.model.rocmpath import deps, pulled
from auditor.model.rocmpath.cmakebuild import read_cmake
from auditor.model.rocmpath.makebuild import read_makefile
from auditor.model.rocmpath.pulled import pulled_in_build_files
from auditor.model.rocmpath.reader import read_project
from tests.conftest import write_tree

pytestmark = pytest.mark.slow   # adversarial build files up to 2 MB

REAL_PARSE = deps.ast.parse
SENTINEL = "SENTINEL_OUTSIDE_93b1"
TWO_MB = 2 * 1024 * 1024 - 1024      # just under the 2 MB a build file is read up to


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "auditor", *args, "--no-progress", "--no-cache"], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def _escaping_tree(tmp_path: Path) -> Path:
    write_tree(tmp_path / "outside", {"CMakeLists.txt": f"project(o)\nenable_language(HIP)  # {SENTINEL}\n",
                                      "deep/x.cmake": f"# {SENTINEL}\n"})
    repo = write_tree(tmp_path / "repo", {
        "CMakeLists.txt": "project(p LANGUAGES CXX CUDA)\nadd_subdirectory(third_party/../../outside)\n"
                          "add_subdirectory(third_party/lib)\nadd_subdirectory(third_party/root)\n"
                          "add_subdirectory(/)\n",
        "third_party/lib/CMakeLists.txt": "project(lib)\n",
        "k.cu": "__global__ void k() {}\n",
    })
    (repo / "third_party" / "root").symlink_to("/")                       # a committed link to the host's root
    (repo / "third_party" / "lib" / "up").symlink_to(tmp_path / "outside")  # and one inside a vendored directory
    return repo


def test_the_vendored_walk_never_leaves_the_tree(tmp_path, monkeypatch):
    repo = _escaping_tree(tmp_path)
    listed: list[str] = []
    real_scandir = os.scandir

    def recording_scandir(path):
        listed.append(os.path.realpath(path))
        return real_scandir(path)

    monkeypatch.setattr(pulled.os, "scandir", recording_scandir)
    found = discover([repo], repo)
    assert "third_party" in found.vendored
    files = pulled_in_build_files(found.files, repo, found.vendored)
    assert [f.path for f in files] == ["third_party/lib/CMakeLists.txt"]
    assert listed and all(Path(p).is_relative_to(repo.resolve()) for p in listed)


def test_a_build_that_points_out_of_the_tree_reads_nothing_there(tmp_path):
    repo = _escaping_tree(tmp_path)
    done = _cli(str(repo), "--format", "json")
    assert done.returncode in (0, 1), done.stderr
    assert SENTINEL not in done.stdout + done.stderr and "Traceback" not in done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["components"][0]["rocm_build"] is False    # outside's enable_language(HIP) was not read


ADVERSARIAL_CMAKE = {
    "path characters": "project(x)\nset(S " + "a/" * (TWO_MB // 2) + ")\n",          # a quadratic SOURCE findall
    "dots": "project(x)\nset(S " + "a." * (TWO_MB // 2) + ")\n",
    "unclosed strings": "project(x)\nset(" + '"\\' * (TWO_MB // 2) + "\n",
    "parentheses": "project(x)\nif(" + "(" * TWO_MB + "\n",
    "LANGUAGES": "project(x " + "LANGUAGES " * (TWO_MB // 10) + "\n",
    "long condition": "if(" + "a_HIP " * (TWO_MB // 6) + ")\nendif()\n",
}


@pytest.mark.parametrize("case", sorted(ADVERSARIAL_CMAKE))
def test_the_cmake_reader_finishes_on_2mb(case):
    build = read_cmake("CMakeLists.txt", ADVERSARIAL_CMAKE[case])
    assert build.path == "CMakeLists.txt" and not build.compiles_cu


def test_the_makefile_reader_finishes_on_2mb():
    text = "all:\n\tnvcc " + "-D" * (TWO_MB // 2) + "\n" + " " * (TWO_MB // 2) + "x\n"
    assert read_makefile("Makefile", text).compiles_cu


def test_deep_cmake_and_makefile_nesting_is_one_partial_file():
    cmake = read_cmake("CMakeLists.txt", "if(USE_ROCM)\n" * 200_000 + "set(V ON)\n" * 200_000)
    make = read_makefile("Makefile", "X ?= 0\n" + "ifeq ($(X),1)\n" * 200_000 + "CFLAGS += -DX\n" * 100_000)
    assert "nested over 64 levels" in cmake.partial and "nested over 64 levels" in make.partial


def _refuse_to_parse(text, *args, **kwargs):
    if len(text) > deps.MAX_PYTHON_BUILD_CHARS:
        raise AssertionError("a build script over the cap was parsed")
    return REAL_PARSE(text, *args, **kwargs)


def _project(tmp_path: Path, files: dict[str, str], deadline: float | None = None):
    write_tree(tmp_path, files)
    sources = discover([tmp_path], tmp_path).files
    return read_project(sources, deadline=deadline)


@pytest.mark.parametrize("name, text", [
    ("setup.py", "from setuptools import setup\n" + "name=x,\n" * (TWO_MB // 8) + "setup()\n"),   # names: quadratic
    ("setup.py", "from setuptools import setup\nimport torch\n" + "if torch.version.hip:\n    x = 'a/b.cu'\n"
     * (TWO_MB // 40)),
    ("op_builder/fused.py", "import torch\nclass B:\n    def is_compatible(self):\n"
     + "        if torch.version.hip:\n            return False\n" * (TWO_MB // 60)),
])
def test_a_2mb_python_build_script_is_refused_unparsed(tmp_path, name, text, monkeypatch):
    monkeypatch.setattr(deps.ast, "parse", _refuse_to_parse)
    project = _project(tmp_path, {name: text})
    assert project.unread == {name: "not read as a build script: over 256 KB"}


@pytest.mark.parametrize("text", [
    "from setuptools import setup\nimport torch\n" + "if torch.version.hip:\n    x = 'a/b.cu'\n" * 6000,
    "from setuptools import setup\n" + "name=x,\n" * 30_000 + "setup()\n",
])
def test_a_large_python_build_script_under_the_cap_is_read(tmp_path, text):
    project = _project(tmp_path, {"setup.py": text})
    assert not project.unread


@pytest.mark.parametrize("chain", ["a" + ".b" * 2500, "a" + "()" * 2500, "a" + ".b()" * 1200])
def test_a_deep_chain_in_setup_py_does_not_fail_the_run(tmp_path, chain):
    repo = write_tree(tmp_path / "repo", {
        "setup.py": f"import torch\nfrom setuptools import setup\nx = {chain}\n"
                    "if torch.version.hip:\n    flags = ['--offload-arch=gfx90a']\nsetup(name='deep')\n",
        "deep.py": f"import tensorrt_llm\ny = {chain}\n",
    })
    done = _cli(str(repo), "--format", "json")
    assert done.returncode in (0, 1), done.stderr
    assert "Traceback" not in done.stderr and "RecursionError" not in done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["summary"]["files_scanned"] == 2
    assert not report["errors"]                      # both read to the end: no recursion over the chain
    assert ("deep.py", 1) in {(f["path"], f["line"]) for f in report["findings"] if f["rule"] == "RA100"}


def test_a_build_file_over_2mb_is_named_as_not_read(tmp_path):
    project = _project(tmp_path, {"CMakeLists.txt": "#" * (3 * 1024 * 1024)})
    assert project.unread == {"CMakeLists.txt": "not read: over 2 MB or not a regular file"}


def test_the_pre_pass_stops_at_its_deadline_and_says_so(tmp_path):
    project = _project(tmp_path, {"CMakeLists.txt": "project(x LANGUAGES HIP)\n", "setup.py": "setup()\n"},
                          deadline=time.monotonic() - 1)
    assert project.unread == {"CMakeLists.txt": "not read: the build pre-pass ran out of its time budget",
                              "setup.py": "not read: the build pre-pass ran out of its time budget"}
    assert not any(path.verified for path in project.paths.values())


def test_a_file_the_pre_pass_could_not_read_is_named_in_the_report(tmp_path):
    repo = write_tree(tmp_path / "repo", {"CMakeLists.txt": "project(x)\n" + "if(USE_ROCM)\n" * 100,
                                          "a.py": "import torch\n"})
    done = _cli(str(repo), "--format", "json")
    assert done.returncode in (0, 1) and "Traceback" not in done.stderr
    errors = {e["path"]: e["message"] for e in json.loads(done.stdout)["errors"]}
    assert "nested over 64 levels" in errors["CMakeLists.txt"]


def test_deeply_nested_scanned_python_is_one_partial_file_each(tmp_path):
    repo = write_tree(tmp_path / "repo", {
        "deep_not.py": "import pynvml\nif " + "not " * 2500 + "x:\n    pass\n",
        "deep_sum.py": "import pynvml\ny = 1" + " + 1" * 20_000 + "\n",
        "fine.py": "import pynvml\n",
    })
    done = _cli(str(repo), "--format", "json")
    assert done.returncode in (0, 1) and "Traceback" not in done.stderr
    report = json.loads(done.stdout)
    errors = {e["path"]: e["message"] for e in report["errors"]}
    assert set(errors) == {"deep_not.py", "deep_sum.py"} and all("nesting too deep" in m for m in errors.values())
    found = [f["path"] for f in report["findings"] if f["rule"] == "RA112"]
    # the other files are scanned; a too-deep file's imports are read where its lines can still be parsed
    assert "fine.py" in found and set(found) <= {"fine.py", "deep_sum.py", "deep_not.py"}


@pytest.mark.parametrize("body", [
    "__global__ void k() {" * (TWO_MB // 21),                        # kernels that never close
    "__global__ void k() { SHFL(v, 1); }\n" * (TWO_MB // 40),         # many small kernels calling the macro
    "__global__ void k() " + "{" * (TWO_MB - 40),                     # one kernel, nested past the bound
])
def test_the_wide_shuffle_reader_finishes_on_2mb_kernels(body):
    from auditor.model.rocmpath.wideshuffle import wide_shuffle_uses
    from auditor.types import SourceFile

    source = SourceFile("k.cu", "k.cu", "cuda")
    uses = wide_shuffle_uses([source], lambda path: body, {"SHFL": ("defs.h:3", "#define SHFL(v, l) __shfl(v, l)")})
    assert all(use.macro == "SHFL" and use.path == "k.cu" for found in uses.values() for use in found)


def test_the_wide_shuffle_reader_finishes_on_one_long_line_of_calls():
    from auditor.model.rocmpath.wideshuffle import wide_shuffle_uses
    from auditor.types import SourceFile

    body = "__global__ void k() { " + "SHFL(v, 1); " * 15_000 + "}"   # one line, within a kernel's bound
    uses = wide_shuffle_uses([SourceFile("k.cu", "k.cu", "cuda")], lambda path: body,
                             {"SHFL": ("defs.h:3", "#define SHFL(v, l) __shfl(v, l)")})
    assert {use.line for use in uses["k.cu"]} == {1} and uses["k.cu"][0].kernel == (1, 1)
