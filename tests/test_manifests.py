"""Declared dependencies in every manifest format, read statically, reported at their line."""
from tests.conftest import write_tree


def hits(report) -> set[tuple[str, int, str]]:
    return {(f["path"], f["line"], f["rule"]) for f in report["findings"]}


def test_requirements_with_includes_index_urls_and_local_versions(tmp_path, run_json):
    write_tree(tmp_path, {
        "requirements.txt": (
            "# serving stack\n"                                            # 1
            "--extra-index-url https://download.pytorch.org/whl/cu121\n"   # 2
            "-r deps/common.in\n"                                          # 3
            "torch==2.3.1+cu121\n"                                         # 4
            "tensorrt-llm==0.10.0 \\\n"                                    # 5
            "    --hash=sha256:abc\n"                                      # 6
            "fastapi==0.111.0\n"                                           # 7
        ),
        "deps/common.in": "pynvml>=11.5\ncupy-cuda12x==13.1.0\ntransformers\n",
    })
    _, report = run_json(tmp_path)
    assert hits(report) == {
        ("requirements.txt", 2, "RA151"),
        ("requirements.txt", 4, "RA150"),
        ("requirements.txt", 5, "RA100"),
        ("deps/common.in", 1, "RA112"),
        ("deps/common.in", 2, "RA114"),
    }


def test_pyproject_pep621_poetry_and_optional_extras(tmp_path, run_json):
    write_tree(tmp_path, {"pyproject.toml": (
        '[project]\n'                                                      # 1
        'name = "llm-app"\n'                                               # 2
        'version = "0.1.0"\n'                                              # 3
        'dependencies = [\n'                                               # 4
        '  "tensorrt-llm>=0.9",\n'                                         # 5
        '  "jax[cuda12]>=0.4.30",\n'                                       # 6
        ']\n'                                                              # 7
        '[project.optional-dependencies]\n'                                # 8
        'hopper = ["flash-attn-3"]\n'                                      # 9
        '[tool.poetry.dependencies]\n'                                     # 10
        'python = "^3.11"\n'                                               # 11
        'pynvml = "^11.5"\n'                                               # 12
    )})
    _, report = run_json(tmp_path)
    found = {(f["line"], f["rule"]): f for f in report["findings"]}
    assert set(found) == {(5, "RA100"), (6, "RA123"), (9, "RA101"), (12, "RA112")}
    assert found[(9, "RA101")]["optional"] is True and "extra 'hopper'" in found[(9, "RA101")]["message"]
    assert found[(5, "RA100")]["optional"] is False


def test_setup_py_is_read_not_run(tmp_path, run_json):
    write_tree(tmp_path, {"setup.py": (
        "from setuptools import setup\n"                                   # 1
        "\n"                                                               # 2
        "REQUIRES = [\n"                                                   # 3
        "    'torch>=2.1',\n"                                              # 4
        "    'bitsandbytes==0.41.1',\n"                                    # 5
        "]\n"                                                              # 6
        "setup(\n"                                                         # 7
        "    name='quantkit',\n"                                           # 8
        "    install_requires=REQUIRES,\n"                                 # 9
        "    extras_require={'trt': ['tensorrt-llm']},\n"                  # 10
        ")\n"
    )})
    _, report = run_json(tmp_path)
    found = {(f["line"], f["rule"]): f for f in report["findings"]}
    assert set(found) == {(5, "RA104"), (10, "RA100")}
    assert found[(10, "RA100")]["optional"] is True


def test_setup_cfg_environment_yml_pipfile_and_docker_pip(tmp_path, run_json):
    write_tree(tmp_path, {
        "setup.cfg": "[options]\ninstall_requires =\n    numpy\n    pycuda>=2022.1\n",
        "environment.yml": (
            "name: train\n"                     # 1
            "channels:\n"                       # 2
            "  - pytorch\n"                     # 3
            "  - nvidia\n"                      # 4
            "dependencies:\n"                   # 5
            "  - python=3.11\n"                 # 6
            "  - pytorch-cuda=12.1\n"           # 7
            "  - pip:\n"                        # 8
            "    - tensorrt-llm==0.10.0\n"      # 9
        ),
        "Pipfile": '[packages]\nrequests = "*"\nnvidia-ml-py = "==12.535.133"\n',
        "docker/Dockerfile": (
            "FROM python:3.11-slim\n"
            "RUN pip install --no-cache-dir flash-attn-3 fastapi && \\\n"
            "    conda install -y -c nvidia cuda-nvcc\n"
        ),
    })
    _, report = run_json(tmp_path)
    got = hits(report)
    assert ("setup.cfg", 4, "RA115") in got
    assert {("environment.yml", 4, "RA152"), ("environment.yml", 7, "RA153"), ("environment.yml", 9, "RA100")} <= got
    assert ("Pipfile", 3, "RA112") in got
    assert ("docker/Dockerfile", 2, "RA101") in got
    assert ("docker/Dockerfile", 3, "RA152") in got and ("docker/Dockerfile", 3, "RA153") in got


def test_flash_attention_2_is_not_blocked_but_3_and_trt_llm_are(tmp_path, run_json):
    write_tree(tmp_path, {"attn.py": (
        "from flash_attn import flash_attn_func\n"              # 1 FA2: has ROCm backends
        "from flash_attn_interface import flash_attn_func as fa3\n"  # 2 FA3: Hopper build
        "import tensorrt_llm\n"                                 # 3
    )})
    _, report = run_json(tmp_path)
    by_line = {f["line"]: f for f in report["findings"]}
    assert 1 not in by_line
    assert by_line[2]["rule"] == "RA101" and by_line[2]["severity"] == "high"
    assert by_line[3]["rule"] == "RA100" and by_line[3]["severity"] == "critical"


def test_notebook_code_cells_and_pip_magics(tmp_path, run_json):
    import json

    notebook = {"cells": [
        {"cell_type": "markdown", "source": ["import tensorrt_llm is just prose here\n"]},
        {"cell_type": "code", "source": ["!pip install tensorrt-llm\n", "import torch\n"]},
        {"cell_type": "code", "source": ["import pynvml\n", "pynvml.nvmlInit()\n"]},
    ], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    write_tree(tmp_path, {"explore.ipynb": json.dumps(notebook)})
    _, report = run_json(tmp_path)
    got = {(f["rule"], f["line"], f["message"].rsplit("(", 1)[-1]) for f in report["findings"]}
    assert ("RA100", 1, "cell 2, line 1)") in got
    assert ("RA112", 1, "cell 3, line 1)") in got
    assert ("RA509", 2, "cell 3, line 2)") in got


def test_the_conda_cuda_metapackage_is_reported_like_the_pytorch_cuda_pin_beside_it(tmp_path):
    from auditor.run.pipeline import audit
    from auditor.match.rulebook import load_rulebook
    from tests.conftest import write_tree

    tree = write_tree(tmp_path / "repo", {"environment.yml": "name: train\nchannels:\n  - pytorch\n  - nvidia\n"
                                          "dependencies:\n  - pytorch=2.3\n  - pytorch-cuda=11.8\n  - cuda\n"})
    found = sorted((f.span.line, f.rule_id, f.subject) for f in audit([tree], load_rulebook()).findings)
    assert (7, "RA153", "pytorch-cuda") in found and (8, "RA153", "cuda") in found
