"""Containers and package indexes get a ROCm variant beside them, never an edit: the NVIDIA builds and CI jobs keep
the file they build (an earlier fixer turned `FROM nvidia/cuda` and `whl/cu126` into ROCm's in Dockerfiles the
project's NVIDIA CI jobs build)."""
from __future__ import annotations

from auditor.fix.variants import variant_path
from tests.conftest import write_tree
from tests.test_fix_rightness import _fix

DOCKERFILE = ("FROM nvidia/cuda:12.4.1-devel-ubuntu22.04\n"
              "RUN pip install torch==2.5.1 --index-url https://download.pytorch.org/whl/cu124\n")
WORKFLOW = ("name: gpu\non: [push]\njobs:\n  build:\n    runs-on: [self-hosted, nvidia]\n    steps:\n"
            "      - uses: actions/checkout@v4\n      - run: docker build -f docker/Dockerfile .\n")


def test_a_dockerfile_an_nvidia_job_builds_is_kept_and_a_rocm_variant_is_added(tmp_path, capsys):
    root = write_tree(tmp_path / "repo", {"docker/Dockerfile": DOCKERFILE, ".github/workflows/gpu.yml": WORKFLOW})
    _fix(root, "--unsafe")
    assert (root / "docker/Dockerfile").read_text() == DOCKERFILE
    assert (root / "docker/Dockerfile.rocm").read_text() == (
        "FROM rocm/dev-ubuntu-22.04:6.4\n"
        "RUN pip install torch==2.5.1 --index-url https://download.pytorch.org/whl/rocm6.2\n")
    assert "docker/Dockerfile.rocm (new: the ROCm variant of docker/Dockerfile, which stays as it is): RA151 x1, " \
           "RA700 x1" in capsys.readouterr().out


def test_an_index_line_gets_a_rocm_requirements_file_beside_it_not_a_second_index(tmp_path):
    requirements = "--extra-index-url https://download.pytorch.org/whl/cu121\ntorch==2.3.1+cu121\n"
    root = write_tree(tmp_path / "repo", {"requirements.txt": requirements})
    _fix(root, "--unsafe")
    assert (root / "requirements.txt").read_text() == requirements
    assert (root / "requirements-rocm.txt").read_text() == (
        "--extra-index-url https://download.pytorch.org/whl/rocm6.0\ntorch==2.3.1+rocm6.0\n")


def test_the_nightly_index_is_recognised_and_left_for_a_person(tmp_path, capsys):
    requirements = "--index-url https://download.pytorch.org/whl/nightly/cu126\n--pre\ntorch\n"
    root = write_tree(tmp_path / "repo", {"requirements.txt": requirements})
    _fix(root, "--unsafe")
    assert not (root / "requirements-rocm.txt").exists()
    assert "requirements.txt:1: RA151 the nightly index (whl/nightly/cuXYZ)" in capsys.readouterr().out


def test_an_existing_variant_is_never_overwritten(tmp_path, capsys):
    root = write_tree(tmp_path / "repo", {"Dockerfile": DOCKERFILE, "Dockerfile.rocm": "FROM rocm/pytorch\n"})
    _fix(root, "--unsafe")
    assert (root / "Dockerfile.rocm").read_text() == "FROM rocm/pytorch\n"
    assert "Dockerfile.rocm already exists: compare it with this file by hand" in capsys.readouterr().out


def test_variant_names():
    assert variant_path("docker/Dockerfile", "container") == "docker/Dockerfile.rocm"
    assert variant_path("Dockerfile.cuda", "container") == "Dockerfile.rocm"
    assert variant_path("docker-compose.yml", "container") == "docker-compose.rocm.yml"
    assert variant_path("requirements/cu121.txt", "manifest") == "requirements/rocm.txt"
    assert variant_path("requirements-cuda.txt", "manifest") == "requirements-rocm.txt"
    assert variant_path("requirements.txt", "manifest") == "requirements-rocm.txt"
    assert variant_path("pyproject.toml", "manifest") is None
    assert variant_path(".github/workflows/gpu.yml", "ci") is None


def test_no_variant_that_would_still_build_for_cuda(tmp_path, capsys):
    dockerfile = DOCKERFILE + "ENV NVIDIA_VISIBLE_DEVICES=all\nRUN cmake -DWITH_CUDA=ON .. && make\n"
    root = write_tree(tmp_path / "repo", {"Dockerfile": dockerfile})
    _fix(root, "--unsafe")
    assert not (root / "Dockerfile.rocm").exists()
    assert "Dockerfile.rocm: left unchanged: the ROCm variant would still hold" in capsys.readouterr().out
