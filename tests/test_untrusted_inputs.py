"""Every file rocm-audit reads because the tree (or a flag) names it is a regular file of bounded size: devices,
FIFOs, /proc files, links out of the tree and huge blank files are refused or skipped with one clear line, in
bounded time and memory. The resource-limited runs use a subprocess with a 1 GiB address-space limit and a
one-minute timeout as guards (the tests assert exit codes and messages, not durations)."""
from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from auditor.util.boundedio import UnsafeRead, read_bounded
from auditor.cli.app import main
from tests.conftest import write_tree

pytestmark = pytest.mark.slow   # multi-MB inputs under memory and wall-clock limits

ONE_GIB = 1024 ** 3


def limited(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """rocm-audit in a child limited to 1 GiB of memory and one minute."""
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (ONE_GIB, ONE_GIB))

    return subprocess.run([sys.executable, "-m", "auditor", *args, "--no-progress", "--no-cache"], cwd=cwd,
                          capture_output=True, text=True, timeout=60, preexec_fn=limit)


def one_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, text
    return lines[0]


@pytest.mark.parametrize("flag", ["--baseline", "--config", "--hipify-perl"])
def test_dev_zero_named_by_a_flag_is_refused(tmp_path, flag):
    repo = write_tree(tmp_path / "repo", {"a.py": "import pynvml\n"})
    done = limited(str(repo), flag, "/dev/zero", "-q")
    assert done.returncode == 2
    assert "/dev/zero" in one_line(done.stderr) and "a device, not a regular file" in done.stderr


def test_a_fifo_baseline_is_refused_without_blocking(tmp_path):
    repo = write_tree(tmp_path / "repo", {"a.py": "import pynvml\n"})
    fifo = tmp_path / "baseline.json"
    os.mkfifo(fifo)
    done = limited(str(repo), "--baseline", str(fifo), "-q")
    assert done.returncode == 2 and "a FIFO, not a regular file" in one_line(done.stderr)


def test_a_proc_file_is_refused(tmp_path):
    repo = write_tree(tmp_path / "repo", {"a.py": "import pynvml\n"})
    done = limited(str(repo), "--baseline", "/proc/self/environ", "-q")
    assert done.returncode == 2 and "/proc file" in one_line(done.stderr)


def test_a_baseline_that_is_a_link_or_too_big_exits_2_with_one_line(tmp_path, capsys):
    repo = write_tree(tmp_path / "repo", {"a.py": "import pynvml\n"})
    real = tmp_path / "real.json"
    real.write_text('{"version": 1, "entries": []}\n')
    link = repo / ".rocm-audit-baseline.json"
    link.symlink_to(real)
    assert main([str(repo), "--baseline", str(link), "-q", "--no-progress"]) == 2
    assert "symbolic link" in one_line(capsys.readouterr().err)
    big = tmp_path / "big.json"
    with open(big, "wb") as handle:
        handle.truncate(65 * 1024 * 1024)     # sparse: costs no disk
    assert main([str(repo), "--baseline", str(big), "-q", "--no-progress"]) == 2
    assert "over the" in one_line(capsys.readouterr().err)


def test_tree_entries_that_are_devices_fifos_or_links_out_are_not_read(tmp_path):
    repo = write_tree(tmp_path / "repo", {"a.py": "import pynvml\n"})
    os.symlink("/dev/zero", repo / "pyproject.toml")                 # config search and manifest scan
    os.symlink("/dev/zero", repo / ".gitmodules")
    os.symlink("/dev/zero", repo / ".gitignore")
    os.mkfifo(repo / ".rocm-audit.toml")
    os.mkfifo(repo / "requirements.txt")
    os.symlink("/dev/zero", repo / "kernel.cu")
    done = limited(str(repo), "--format", "json", "--fail-on", "never")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert [(f["path"], f["rule"]) for f in report["findings"]] == [("a.py", "RA112")]


def test_requirements_includes_stay_inside_the_root_and_are_bounded(tmp_path):
    outside = write_tree(tmp_path / "outside", {"secret.txt": "tensorrt-llm==0.9\n"})
    os.mkfifo(tmp_path / "repo-fifo")
    repo = write_tree(tmp_path / "repo", {
        "requirements.txt": f"-r {outside / 'secret.txt'}\n-r ../outside/secret.txt\n-r /dev/zero\n"
                            "-r /proc/self/environ\n-r fifo.txt\n-r extra/more.txt\n",
        "extra/more.txt": "pynvml\n",
    })
    os.mkfifo(repo / "fifo.txt")
    os.symlink(outside / "secret.txt", repo / "extra" / "linked.txt")
    (repo / "requirements-dev.txt").write_text("-r extra/linked.txt\n")
    done = limited(str(repo), "--format", "json", "--fail-on", "never")
    assert done.returncode == 0, done.stderr
    found = {(f["path"], f["rule"]) for f in json.loads(done.stdout)["findings"]}
    assert found == {("extra/more.txt", "RA112")}     # nothing from outside the root, nothing from devices


def test_blank_and_huge_files_cost_bounded_time_and_memory(tmp_path):
    repo = write_tree(tmp_path / "repo", {
        "pyproject.toml": "\n" * 1_500_000,
        ".gitmodules": "\n" * 1_500_000,
        "requirements.txt": "\n" * 1_500_000,
        "setup.py": "\n" * 1_500_000,
        "k.cu": "\n" * 1_500_000,
        "a.py": "import pynvml\n",
    })
    for command in ("check", "baseline", "coverage", "config"):
        extra = ["-o", str(tmp_path / "b.json")] if command == "baseline" else []
        done = limited(command, str(repo), *extra)
        assert done.returncode in (0, 1), (command, done.stderr)
    big = write_tree(tmp_path / "big", {"pyproject.toml": "[tool.rocm-audit]\n" + "\n" * 1_500_000})
    done = limited("config", str(big))
    assert done.returncode == 2 and "over the 1,048,576-byte limit" in one_line(done.stderr)


def test_read_bounded_reads_to_the_cap_only(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"x" * 100)
    assert read_bounded(path, 100) == b"x" * 100
    with pytest.raises(UnsafeRead, match="over the 99-byte limit"):
        read_bounded(path, 99)
    with pytest.raises(UnsafeRead, match="a directory"):
        read_bounded(tmp_path, 99)


def test_max_run_time_ends_the_run_with_exit_2(tmp_path):
    repo = write_tree(tmp_path / "repo", {f"m{i}.py": "import pynvml\n" + "x = [1, 2, 3]\n" * 5000
                                           for i in range(300)})
    done = limited(str(repo), "--max-run-time", "0.5", "-q", "-j", "1")
    assert done.returncode == 2
    assert re.search(r"longer than --max-run-time 0.5 s", one_line(done.stderr))
