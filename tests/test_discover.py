from pathlib import Path

from auditor.run.discover.files import classify, discover


def test_classify_kinds():
    assert classify("csrc/kernel.cu") == "cuda"
    assert classify("include/ops.cuh") == "cuda"
    assert classify("csrc/binding.cpp") == "cpp"
    assert classify("pkg/model.py") == "python"
    assert classify("demo.ipynb") == "notebook"
    assert classify("requirements-dev.txt") == "manifest"
    assert classify("requirements/cuda.txt") == "manifest"
    assert classify("pyproject.toml") == "manifest"
    assert classify("environment-gpu.yml") == "manifest"
    assert classify("setup.py") == "python"  # parsed as Python; its requirements are read from setup()
    assert classify("CMakeLists.txt") == "build"
    assert classify("cmake/FindCUDNN.cmake") == "build"
    assert classify("docker/Dockerfile.cuda") == "container"
    assert classify(".github/workflows/gpu.yml") == "ci"
    assert classify("scripts/launch.sh") == "shell"
    assert classify("README.md") is None
    assert classify("notes.txt") is None


def test_gitignore_and_excludes_are_honoured(tmp_path: Path):
    (tmp_path / ".gitignore").write_text("build/\n*.gen.cu\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.cu").write_text("__global__ void a() {}\n")
    (tmp_path / "src" / "b.gen.cu").write_text("__global__ void b() {}\n")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "c.cu").write_text("__global__ void c() {}\n")
    (tmp_path / "third").mkdir()
    (tmp_path / "third" / ".gitignore").write_text("skip.py\n")
    (tmp_path / "third" / "skip.py").write_text("x = 1\n")
    (tmp_path / "third" / "keep.py").write_text("x = 1\n")
    (tmp_path / "vendor").mkdir()
    (tmp_path / "vendor" / "d.cu").write_text("__global__ void d() {}\n")
    found = discover([tmp_path], tmp_path, excludes=["vendor/"])
    assert [f.path for f in found.files] == ["src/a.cu", "third/keep.py"]


def test_explicit_file_is_scanned_unless_force_exclude(tmp_path: Path):
    (tmp_path / ".gitignore").write_text("gen/\n")
    (tmp_path / "gen").mkdir()
    target = tmp_path / "gen" / "k.cu"
    target.write_text("__global__ void k() {}\n")
    assert [f.path for f in discover([target], tmp_path).files] == ["gen/k.cu"]
    assert discover([target], tmp_path, force_exclude=True).files == ()


def test_symlinks_are_not_followed(tmp_path: Path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "k.cu").write_text("__global__ void k() {}\n")
    (tmp_path / "a" / "loop").symlink_to(tmp_path / "a")
    (tmp_path / "a" / "dangling.cu").symlink_to(tmp_path / "missing.cu")
    found = discover([tmp_path], tmp_path)
    assert [f.path for f in found.files] == ["a/k.cu"]


def test_vendored_code_and_submodules_are_skipped_unless_asked(tmp_path: Path):
    (tmp_path / ".gitmodules").write_text('[submodule "csrc/cutlass"]\n\tpath = csrc/cutlass\n\turl = x\n')
    for relative in ("src/k.cu", "third_party/cub/c.cu", "csrc/cutlass/gemm.cu", "csrc/own.cu"):
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text("__global__ void k() {}\n")
    found = discover([tmp_path], tmp_path)
    assert [f.path for f in found.files] == ["csrc/own.cu", "src/k.cu"]
    assert found.vendored == ("csrc/cutlass", "third_party")
    everything = discover([tmp_path], tmp_path, include_vendored=True)
    assert len(everything.files) == 4 and everything.vendored == ()


def test_pictures_and_notes_named_after_a_dockerfile_are_not_dockerfiles():
    from auditor.run.discover.files import classify
    assert classify("docs/dockerfile-layers.png") is None
    assert classify("docker/Dockerfile.md") is None
    assert classify("docker/Dockerfile.rocm") == "container"
    assert classify("Dockerfile-cuda") == "container"


def test_buildkite_and_circleci_pipelines_are_ci_files():
    assert classify(".buildkite/hardware_tests/amd.yaml") == "ci"
    assert classify(".circleci/config.yml") == "ci"
    assert classify(".github/workflows/wheels.yml") == "ci"
    assert classify("deploy/buildkite.yaml") == "yaml"
