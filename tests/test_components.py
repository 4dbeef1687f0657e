"""Components come from real manifests (rocm-path.md section 5); CI, Docker and dev scripts are ops; a project
importing its own package is never a CUDA-only package finding; collections of programs are judged by share."""
from tests.conftest import write_tree

PTX_KERNEL = (
    "__global__ void k(unsigned* x) {\n"
    "  unsigned r;\n"
    "  asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0}, {%0}, {%0}, {%0};\" : \"+r\"(r));\n"
    "  x[threadIdx.x] = r;\n"
    "}\n"
)
CLEAN_KERNEL = "__global__ void k(float* x) { x[threadIdx.x] = 1.f; }\n"


def test_only_real_manifests_make_components_and_ops_never_decide(tmp_path, run_json):
    root = write_tree(tmp_path / "repo", {
        "pyproject.toml": "[project]\nname = \"tool\"\nversion = \"1\"\n",
        "tool/__init__.py": "",
        "lint/pyproject.toml": "[tool.ruff]\nline-length = 100\n",          # ruff only: not a component
        "bench/setup.py": "print('not a build')\n",                         # never calls setup()
        "docker/Dockerfile": "FROM nvidia/cuda:12.4.0-devel-ubuntu22.04\n",
        ".github/workflows/ci.yml": "jobs:\n  t:\n    container: nvidia/cuda:12.4.0-runtime-ubuntu22.04\n",
    })
    _, report = run_json(root, "--fail-on", "never")
    assert [c["path"] for c in report["components"]] == ["."]
    assert report["summary"]["verdict"] == "ready"
    docker = [f for f in report["findings"] if f["path"] == "docker/Dockerfile"]
    assert docker and all(f["disposition"] == "ops" for f in docker)


def test_a_nested_distribution_is_secondary_and_never_moves_the_headline(tmp_path, run_json):
    root = write_tree(tmp_path / "repo", {
        "pyproject.toml": "[project]\nname = \"core\"\nversion = \"1\"\n",
        "core/__init__.py": "",
        "addon/setup.py": "from setuptools import setup\nsetup(name='core-addon')\n",
        "addon/addon/__init__.py": "import tensorrt_llm\n",
    })
    _, report = run_json(root, "--fail-on", "never")
    kinds = {c["path"]: (c["kind"], c["verdict"]) for c in report["components"]}
    assert kinds == {".": ("primary", "ready"), "addon": ("secondary", "blocked")}
    assert report["summary"]["verdict"] == "ready"
    assert "Not covered: addon/ (secondary, blocked)" in report["summary"]["verdict_reason"]
    trt = next(f for f in report["findings"] if f["path"] == "addon/addon/__init__.py")
    assert trt["disposition"] == "optional"


def test_the_project_importing_itself_is_not_a_cuda_only_package(tmp_path, run_json):
    root = write_tree(tmp_path / "repo", {
        "setup.py": "from setuptools import setup\nsetup(name='pynvml', packages=['pynvml'])\n",
        "pynvml/__init__.py": "from pynvml.smi import query\n",
        "pynvml/smi.py": "import pynvml\n\ndef query():\n    return pynvml\n",
    })
    _, report = run_json(root, "--fail-on", "never")
    assert not [f for f in report["findings"] if f["category"] == "cuda_only_python_package"]


def test_an_unmaintained_package_rule_never_fires_on_the_package_itself(tmp_path, run_json):
    """AutoAWQ's own repository: setup.py names the distribution through a variable, its docs requirements
    install it, its examples import its package `awq`. Another project importing it is still reported, on its
    line."""
    root = write_tree(tmp_path / "repo", {
        "setup.py": 'from setuptools import setup\nPACKAGE_NAME = "autoawq"\n'
                    "setup(name=PACKAGE_NAME, packages=['awq'])\n",
        "awq/__init__.py": "from awq.models import AutoAWQForCausalLM\n",
        "docs/requirements.txt": "sphinx\nautoawq\n",
        "examples/quantize.py": "import os\nfrom awq import AutoAWQForCausalLM\n",
    })
    other = write_tree(tmp_path / "user", {
        "pyproject.toml": '[project]\nname = "app"\nversion = "1"\n',
        "app/__init__.py": "import os\nfrom awq import AutoAWQForCausalLM\n",
    })
    _, report = run_json(root, "--fail-on", "never")
    assert [f for f in report["findings"] if f["rule"] == "RA134"] == []
    _, report = run_json(other, "--fail-on", "never")
    assert [(f["rule"], f["path"], f["line"]) for f in report["findings"] if f["rule"] == "RA134"] == \
        [("RA134", "app/__init__.py", 2)]


def test_a_collection_of_programs_is_judged_by_the_share_blocked(tmp_path, run_json):
    make = "app: main.cu\n\tnvcc -o app main.cu\n"
    files = {}
    for name, kernel in (("a", PTX_KERNEL), ("b", PTX_KERNEL), ("c", CLEAN_KERNEL)):
        files[f"{name}/Makefile"] = make
        files[f"{name}/main.cu"] = kernel + "int main() { return 0; }\n"
    _, report = run_json(write_tree(tmp_path / "two_of_three", files), "--fail-on", "never")
    assert report["summary"]["verdict"] == "blocked"
    assert report["summary"]["verdict_reason"].startswith(
        "blocked: a collection of 3 independent programs; 2 blocked")
    files["b/main.cu"] = CLEAN_KERNEL + "int main() { return 0; }\n"
    _, report = run_json(write_tree(tmp_path / "one_of_three", files), "--fail-on", "never")
    assert report["summary"]["verdict"] == "needs-port"


def test_a_generated_kernel_family_costs_like_one_kernel(tmp_path, run_json):
    one = write_tree(tmp_path / "one", {"gen/fmha_hdim64_sm80.cu": PTX_KERNEL})
    many = write_tree(tmp_path / "many", {f"gen/fmha_hdim{d}_sm{a}.cu": PTX_KERNEL
                                          for d in (32, 64, 96, 128, 192, 256) for a in (80, 90)})
    _, small = run_json(one, "--fail-on", "never")
    _, large = run_json(many, "--fail-on", "never")
    assert len(large["findings"]) == 12 * len(small["findings"])       # every site is still reported
    assert (large["effort"]["low_days"], large["effort"]["high_days"]) == \
        (small["effort"]["low_days"], small["effort"]["high_days"])


def test_another_vendors_backend_beside_the_rocm_one(tmp_path, run_json):
    root = write_tree(tmp_path / "repo", {
        "pyproject.toml": "[project]\nname = \"serve\"\nversion = \"1\"\n",
        "serve/__init__.py": "",
        "requirements/rocm.txt": "torch\n",
        "requirements/cuda.txt": "flashinfer-python==0.2.5\nnvidia-cutlass-dsl==4.2\n",
        "serve/cute_ops.py": "import cutlass\n",           # nothing imports it; its package is a CUDA-only extra
        "serve/platforms/__init__.py": "",
        "serve/platforms/rocm.py": "import torch\nIS_ROCM = torch.version.hip is not None\n",
        "serve/platforms/cuda.py": "import pynvml\n",
    })
    _, report = run_json(root, "--fail-on", "never")
    by_path = {f["path"]: f["disposition"] for f in report["findings"]}
    assert by_path["requirements/cuda.txt"] == "other-vendor-backend"
    assert by_path["serve/platforms/cuda.py"] == "other-vendor-backend"
    # declared only in the CUDA requirements, imported by a module `import serve` never loads: optional
    assert by_path["serve/cute_ops.py"] == "optional"
    assert report["summary"]["verdict"] == "ready"


def test_versioned_requirement_variants_per_vendor_are_backends_too(tmp_path, run_json):
    root = write_tree(tmp_path / "repo", {
        "pyproject.toml": "[project]\nname = \"comm\"\nversion = \"1\"\n",
        "comm/__init__.py": "",
        "python/requirements_rocm6.txt": "cupy-rocm-6-0\n",
        "python/requirements_cuda12.txt": "cupy-cuda12x\ncuda-bindings\n",
        "python/requirements_cudatools.txt": "cupy-cuda12x\n",    # no vendor word of its own: read as it is
    })
    _, report = run_json(root, "--fail-on", "never")
    by_path = {(f["path"], f["line"]): f["disposition"] for f in report["findings"]}
    assert by_path[("python/requirements_cuda12.txt", 1)] == "other-vendor-backend"
    assert by_path[("python/requirements_cuda12.txt", 2)] == "other-vendor-backend"
    assert by_path[("python/requirements_cudatools.txt", 1)] == "live"


def test_a_module_only_loaded_by_a_function_or_a_guard_is_an_optional_integration(tmp_path, run_json):
    root = write_tree(tmp_path / "repo", {
        "pyproject.toml": "[project]\nname = \"pkg\"\nversion = \"1\"\ndependencies = [\"torch\"]\n",
        "pkg/__init__.py": "from . import core\n\ndef fast_engine():\n    from . import fast\n    return fast\n",
        "pkg/core.py": "import tensorrt_llm\n",            # loaded by `import pkg`: core
        "pkg/fast.py": "import tensorrt_llm\n",            # loaded only when fast_engine() runs
    })
    _, report = run_json(root, "--fail-on", "never")
    by_path = {f["path"]: f["disposition"] for f in report["findings"]}
    # __init__.py's `from . import core` fails with core on ROCm (RA920, a symptom); fast_engine()'s import does not
    assert by_path == {"pkg/core.py": "live", "pkg/fast.py": "optional", "pkg/__init__.py": "live"}
    assert [f["rule"] for f in report["findings"] if f["path"] == "pkg/__init__.py"] == ["RA920"]
    assert report["summary"]["verdict"] == "blocked"


def test_a_rewrite_is_paid_once_per_directory_of_kernels(tmp_path, run_json):
    one = write_tree(tmp_path / "one", {"kern/attn_up.cu": PTX_KERNEL})
    many = write_tree(tmp_path / "many", {f"kern/attn_{name}.cu": PTX_KERNEL
                                          for name in ("up", "down", "gate", "fused", "tail")})
    _, small = run_json(one, "--fail-on", "never")
    _, large = run_json(many, "--fail-on", "never")
    ptx = [f for f in large["findings"] if f["category"] == "ptx_inline_asm"]
    assert len(ptx) == 5 and sum(f["effort_hours"][1] > 0 for f in ptx) == 1
    assert large["effort"]["by_category"]["ptx_inline_asm"] == small["effort"]["by_category"]["ptx_inline_asm"]


def test_of_components_with_the_same_verdict_the_one_with_the_most_work_explains_it(tmp_path, run_json):
    kernel = (
        "__global__ void reduce(float* x) {\n"
        "  float v = x[threadIdx.x];\n"
        "  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffff, v, o);\n"
        "  if (threadIdx.x % 32 == 0) x[threadIdx.x / 32] = v;\n"
        "}\n"
    )
    root = write_tree(tmp_path / "repo", {
        "setup.py": ("from setuptools import setup\nfrom torch.utils.cpp_extension import CUDAExtension\n"
                     "setup(name='render', packages=['render'],\n"
                     "      ext_modules=[CUDAExtension('render._C', ['render/csrc/reduce.cu'])])\n"),
        "render/__init__.py": "",
        "environment.yml": "name: render\ndependencies:\n  - cudatoolkit=11.3\n  - pytorch\n",
        "render/csrc/CMakeLists.txt": (
            "cmake_minimum_required(VERSION 3.18)\nproject(render_kernels LANGUAGES CXX CUDA)\n"
            "add_library(render_kernels SHARED reduce.cu)\n"),
        "render/csrc/reduce.cu": kernel,
    })
    _, report = run_json(root, "--fail-on", "never")
    by_path = {c["path"]: c for c in report["components"]}
    assert by_path["."]["verdict"] == by_path["render/csrc"]["verdict"] == "needs-port"
    assert by_path["render/csrc"]["live_findings"] > by_path["."]["live_findings"]
    assert report["summary"]["verdict_reason"] == by_path["render/csrc"]["reason"]
