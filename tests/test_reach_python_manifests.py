"""Which manifest a ROCm user installs from (auditor/model/rocmpath/reqsets.install_variants): one mechanism for every
alternative manifest beside the one pip reads. An alternative `pyproject_<variant>.toml` whose extras are the ROCm
install is the manifest a ROCm user installs from, and its pins replace the default pyproject.toml's for the
verdict; any other variant (a CUDA release's `pyproject-gpu.toml`, a conda recipe) is one the install never reads."""
from tests.conftest import write_tree

PROJECT = "[project]\nname = '{name}'\nversion = '1'\ndependencies = [{deps}]\n"


def _found(data: dict) -> set[tuple[str, int, str]]:
    return {(f["path"], f["line"], f["disposition"]) for f in data["findings"] if f["severity"] in ("high", "critical")}


def test_an_alternative_manifest_that_is_the_rocm_install_replaces_the_default_ones_pins(tmp_path, run_json):
    """pyproject.toml is the CUDA install (a CUDA wheel pinned); pyproject_other.toml's extra `gpu_hip` is the ROCm
    one: the ROCm user never reads the CUDA pins, and the ROCm manifest's own pins decide."""
    default = PROJECT.format(name="img", deps="'numpy', 'cupy-cuda12x'")
    rocm = PROJECT.format(name="img", deps="'numpy', 'nvidia-nccl-cu12'") \
        + "[project.optional-dependencies]\ngpu_hip = ['cupy-rocm-6-0']\n"
    root = write_tree(tmp_path / "r", {"pyproject.toml": default, "pyproject_other.toml": rocm,
                                       "img/__init__.py": "import numpy\n"})
    _, data = run_json(root, "--no-cache", "--fail-on", "never")
    assert _found(data) == {("pyproject.toml", 4, "optional"), ("pyproject_other.toml", 4, "live")}
    assert data["summary"]["verdict"] == "needs-port"


def test_the_rocm_manifest_alone_passes_when_its_pins_are_portable(tmp_path, run_json):
    default = PROJECT.format(name="img", deps="'numpy', 'cupy-cuda12x'")
    rocm = PROJECT.format(name="img", deps="'numpy'") + "[project.optional-dependencies]\ngpu_hip = ['cupy-rocm-6-0']\n"
    root = write_tree(tmp_path / "r", {"pyproject.toml": default, "pyproject_other.toml": rocm,
                                       "img/__init__.py": "import numpy\n"})
    code, data = run_json(root, "--no-cache")
    assert (code, data["summary"]["verdict"]) == (0, "ready")
    assert _found(data) == {("pyproject.toml", 4, "optional")}
    recipe = 'pip install ".[gpu_hip]"` (with pyproject_other.toml as the pyproject.toml)'
    assert recipe in data["summary"]["verdict_reason"]


def test_release_variants_of_the_manifests_are_not_the_default_install(tmp_path, run_json):
    """`pip install .` reads pyproject.toml (a CPU package); pyproject-gpu.toml and the conda recipes package the
    CUDA variants for other releases. Their CUDA wheels and toolkit pins are notes; pyproject.toml's own are not."""
    root = write_tree(tmp_path / "f", {
        "pyproject.toml": PROJECT.format(name="f-cpu", deps="'nvidia-cublas-cu12'"),
        "pyproject-gpu.toml": PROJECT.format(name="f-gpu", deps="'nvidia-cublas-cu12'"),
        "conda/f-gpu/meta.yaml": "package:\n  name: f-gpu\nrequirements:\n  run:\n    - cuda-version 12.4\n",
        "f/__init__.py": ""})
    _, data = run_json(root, "--no-cache")
    found = {(path, disposition) for path, _, disposition in _found(data)}
    assert ("pyproject.toml", "live") in found
    assert ("pyproject-gpu.toml", "optional") in found and ("pyproject-gpu.toml", "live") not in found
    assert ("conda/f-gpu/meta.yaml", "optional") in found and ("conda/f-gpu/meta.yaml", "live") not in found


def test_a_conda_recipe_without_a_pip_build_is_the_install(tmp_path, run_json):
    """A feedstock (a recipe and no setup.py or pyproject.toml): the recipe is how the package installs."""
    root = write_tree(tmp_path / "feedstock", {
        "recipe/meta.yaml": "package:\n  name: f-gpu\nrequirements:\n  run:\n    - cuda-version 12.4\n"})
    _, data = run_json(root, "--no-cache")
    assert ("recipe/meta.yaml", 5, "live") in {(f["path"], f["line"], f["disposition"]) for f in data["findings"]}
