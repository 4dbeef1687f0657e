"""Fixture kernels are real CUDA: each .cu/.cuh compiles with nvcc (skipped where nvcc is absent)."""
import shlex
import shutil
import subprocess

import pytest

from tests.conftest import FIXTURES, REPO

pytestmark = pytest.mark.slow   # the fixtures' sources through nvcc

NVCC = shutil.which("nvcc")
FLAGS_FILE = FIXTURES / "NVCC_FLAGS.txt"


def _entries() -> list[tuple[str, str]]:
    entries = []
    for line in FLAGS_FILE.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            path, _, flags = line.partition(":")
            entries.append((path.strip(), flags.strip()))
    return entries


def test_every_cuda_fixture_is_listed():
    listed = {path for path, _ in _entries()}
    sources = {p.relative_to(REPO).as_posix() for root in (FIXTURES, REPO / "auditor" / "example")
               for p in root.rglob("*.cu")}
    assert sources <= listed, f"add to NVCC_FLAGS.txt: {sorted(sources - listed)}"


@pytest.mark.skipif(NVCC is None, reason="nvcc is not installed on this machine")
@pytest.mark.parametrize(("path", "flags"), _entries(), ids=[p for p, _ in _entries()])
def test_fixture_compiles_with_nvcc(path, flags, tmp_path):
    if flags.startswith("skip"):
        pytest.skip(f"{path}: {flags}")
    command = [NVCC, *shlex.split(flags), "-c", str(REPO / path), "-o", str(tmp_path / "out.o")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{' '.join(command)}\n{done.stderr[-3000:]}"
