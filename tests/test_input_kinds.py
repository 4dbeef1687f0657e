"""The registry of input kinds (auditor/match/inputs/kinds.py) is the one place a kind is known: discovery, the scan,
the rulebook's text kinds and `fix`'s lanes read it, and every engine returns a typed EngineResult."""
from __future__ import annotations

from dataclasses import replace

from auditor.match.inputs import kinds
from auditor.match.inputs.engine import NO_FACTS, EngineResult, ScanInput
from auditor.match.inputs.textual import TextEngine
from auditor.match.rulebook import load_rulebook
from auditor.match.rulebook.context import ScanContext
from auditor.match.rulebook.schema import TEXT_KINDS
from auditor.run.scan.file import scan_text_as
from tests.conftest import write_tree


def test_text_rule_kinds_are_the_registrys():
    assert TEXT_KINDS == {k.name for k in kinds.KINDS if k.text_rules}


def test_every_kind_is_claimed_once_in_order():
    names = [k.name for k in kinds.KINDS]
    assert len(names) == len(set(names))
    assert kinds.classify("a/k.cu") == "cuda" and kinds.classify("a/k.h") == "cpp"
    assert kinds.classify("requirements.txt") == "manifest" and kinds.classify("recipe/meta.yaml") == "conda"
    assert kinds.classify(".github/workflows/ci.yml") == "ci" and kinds.classify("docker-compose.yml") == "container"
    assert kinds.classify("Dockerfile.md") is None and kinds.classify("notes.txt") is None


def test_engines_return_typed_results_with_typed_empty_facts():
    ctx = ScanContext.of(load_rulebook())
    text = "FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04\nHEALTHCHECK CMD nvidia-smi || exit 1\n"
    result = kinds.input_kind("container").engine.scan(ScanInput("Dockerfile", text, text.splitlines()), ctx)
    assert isinstance(result, EngineResult) and result.facts is NO_FACTS and result.coverage is None
    assert "RA750" in {f.rule_id for f in result.findings}
    cuda = "#include <cuda_runtime.h>\n__global__ void k(int* x) { x[threadIdx.x] = __shfl_sync(0xffffffff, 1, 0); }\n"
    result = kinds.input_kind("cuda").engine.scan(ScanInput("k.cu", cuda, cuda.splitlines()), ctx)
    assert result.coverage is not None and result.findings
    assert scan_text_as("k.cu", "cuda", cuda, ctx).facts.defines_kernels


def test_a_new_kind_is_one_record(tmp_path, run_json, monkeypatch):
    """A `justfile` read as shell: one InputKind, and discovery classifies it and the scan runs its engine."""
    shell = kinds.input_kind("shell")
    justfile = replace(shell, name="just", engine=TextEngine("shell"), claims=lambda p: p.name == "justfile")
    monkeypatch.setattr(kinds, "KINDS", (justfile, *kinds.KINDS))
    monkeypatch.setitem(kinds.BY_NAME, "just", justfile)
    write_tree(tmp_path, {"justfile": "gpus:\n    nvidia-smi -L\n"})
    _code, report = run_json("check", tmp_path)
    assert [(f["path"], f["rule"], f["line"]) for f in report["findings"]] == [("justfile", "RA750", 2)]
    monkeypatch.undo()
    assert kinds.classify("justfile") is None     # unregistered, discovery does not read it
