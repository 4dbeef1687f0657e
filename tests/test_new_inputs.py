"""Kubernetes/Helm manifests, Compose files, Cython, Bazel and conda recipes: discovery classifies them (and
only them), the rules report the line a reader would fix, and each rule's `flag` examples say which line."""
import json
import re
from pathlib import Path

import pytest

from auditor.run.discover.files import classify, discover
from auditor.run.discover.files import refine
from auditor.match.rulebook import load_rulebook
from auditor.run.scan.file import scan_text_as
from tests.conftest import REPO

FIXTURE = REPO / "tests" / "data" / "gpu_inputs"
RULEBOOK = load_rulebook()
NEW_RULE_FILES = {"container/k8s.toml", "build/bazel.toml", "python/conda.toml", "cuda/cython.toml"}
NEW_RULES = [rule for rule in RULEBOOK.rules if rule.source_file in NEW_RULE_FILES]
ANNOTATION = re.compile(r"#\s*ruleid:\s*(RA\d{3})")


def annotated(root: Path) -> set[tuple[str, str, int]]:
    """`# ruleid: RA720` comments: (rule, path, the line below)."""
    want = set()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            if match := ANNOTATION.search(line):
                want.add((match.group(1), path.relative_to(root).as_posix(), number + 1))
    return want


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    from auditor.cli.app import main

    target = tmp_path_factory.mktemp("gpu_inputs") / "report.json"
    code = main([str(FIXTURE), "--format", "json", "-o", str(target), "--fail-on", "never", "-j", "1",
                 "--no-progress", "--no-cache"])
    assert code == 0
    return json.loads(target.read_text())


def test_every_finding_is_the_annotated_rule_on_the_annotated_line(report):
    found = {(f["rule"], f["path"], f["line"]) for f in report["findings"]}
    assert found == annotated(FIXTURE)


def test_a_recipe_line_selected_only_for_the_cuda_variant_is_optional(report):
    lines = (FIXTURE / "recipe" / "meta.yaml").read_text().splitlines()
    variant = next(n for n, line in enumerate(lines, 1) if "cudatoolkit" in line)   # # [cuda_compiler_version != "None"]
    pinned = next(n for n, line in enumerate(lines, 1) if "cuda-version" in line)
    in_block = next(n for n, line in enumerate(lines, 1) if "cudnn" in line)    # inside {% if cuda_compiler… %}
    by_line = {f["line"]: f for f in report["findings"] if f["path"] == "recipe/meta.yaml"}
    assert by_line[variant]["rule"] == "RA153" and by_line[variant]["optional"] is True
    assert by_line[in_block]["rule"] == "RA153" and by_line[in_block]["optional"] is True
    assert by_line[pinned]["rule"] == "RA153" and by_line[pinned]["optional"] is False


def test_discovery_reads_manifests_charts_and_recipes_but_not_other_yaml():
    kinds = {s.path: s.kind for s in discover([FIXTURE], FIXTURE).files}
    assert kinds["deploy/k8s/trainer.yaml"] == "k8s"
    assert kinds["charts/server/values.yaml"] == "k8s"                 # beside Chart.yaml: a Helm chart
    assert kinds["charts/server/templates/deployment.yaml"] == "k8s"   # a template: not valid YAML
    assert kinds["docker-compose.yml"] == "container"
    assert kinds["recipe/meta.yaml"] == "conda"
    assert kinds["BUILD.bazel"] == "bazel" and kinds[".bazelrc"] == "bazel"
    assert kinds["ops/_cuda.pyx"] == "cython"
    assert "config/settings.yaml" not in kinds                          # mentions nvidia.com/gpu, is no manifest


def test_a_yaml_file_named_on_the_command_line_is_sniffed_too(tmp_path):
    settings = tmp_path / "settings.yaml"
    settings.write_text("resource: nvidia.com/gpu\n")
    pod = tmp_path / "pod.yml"
    pod.write_text("apiVersion: v1\nkind: Pod\nspec: {}\n")
    found = {s.path: s.kind for s in discover([settings, pod], tmp_path).files}
    assert found == {"pod.yml": "k8s"}


def test_classify_names():
    assert classify("a/b/ops.pxd") == "cython" and classify("x.pxi") == "cython"
    assert classify("third/BUILD") == "bazel" and classify("tools/defs.bzl") == "bazel"
    assert classify("WORKSPACE") == "bazel" and classify("MODULE.bazel") == "bazel"
    assert classify("conda/recipe/meta.yaml") == "conda" and classify("recipe/recipe.yaml") == "conda"
    assert classify("environment.yml") == "manifest"
    assert refine("yaml", Path("/nonexistent/x.yaml")) is None


def test_a_fifo_named_like_a_manifest_is_not_opened(tmp_path):
    import os

    fifo = tmp_path / "pod.yaml"
    os.mkfifo(fifo)
    assert refine("yaml", fifo) is None     # would block forever if it were read


def test_cython_extern_blocks_are_read_with_the_cuda_knowledge():
    code = ('cdef extern from "cudnn.h" nogil:\n'
            "    int cudnnCreate(void** handle)\n"
            "\n"
            "def f():\n"
            "    cudnnCreate(NULL)\n")
    result = scan_text_as("ops.pyx", "cython", code, RULEBOOK)
    assert result.error is None
    assert [(f.rule_id, f.span.line) for f in result.findings] == [("RA400", 1)]   # cuDNN, at the extern line
    # HIPIFY's -roc target maps the header and the call to MIOpen: both count as converted, MIOpen named
    assert result.coverage is not None and result.coverage.converted == 2 and not result.coverage.unconverted
    assert result.coverage.targets == (("MIOpen", 2),)


def test_bazel_if_cuda_beside_if_rocm_is_guarded():
    code = 'srcs = if_cuda(["a.cu.cc"]) + if_rocm(["a.hip.cc"])\n'
    [finding] = [f for f in scan_text_as("BUILD", "bazel", code, RULEBOOK).findings if f.rule_id == "RA642"]
    assert finding.guarded and finding.severity.label == "info"


@pytest.mark.parametrize("rule", NEW_RULES, ids=lambda r: r.id)
def test_flag_examples_pin_the_line(rule):
    """Each flag example marks its reported line with a trailing `# flag`; the rule reports exactly those."""
    for example in rule.flag:
        marked = set(example.lines)   # the loader reads the `# flag` markers (and removes them from the code)
        assert marked, f"{rule.id}: a flag example marks no line with `# flag`"
        result = scan_text_as(example.file, classify(example.file), example.code, RULEBOOK)
        lines = {f.span.line for f in result.findings if f.rule_id == rule.id}
        assert lines == marked, f"{rule.id} on {example.file}: reported {sorted(lines)}, marked {sorted(marked)}"
