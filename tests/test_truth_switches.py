"""The ROCm/CUDA switches live in one data file (rules/guards.toml), checked at load, and are named in code only
by auditor/truth/, the package that evaluates them."""
from __future__ import annotations

import ast
import re
import shutil
import tomllib
from pathlib import Path

import pytest

from auditor.match.rulebook import RuleError, load_rulebook, rules_root
from auditor.truth.switches import SwitchError, Switches, read_table, shipped
from tests.codebase import syntax_tree

ROOT = Path(__file__).resolve().parent.parent
GUARDS = (ROOT / "rules" / "guards.toml").read_text(encoding="utf-8")
# Switch names a regex elsewhere once spelled out (six places had diverged): each is in the data file.
SWITCH_WORDS = ("USE_ROCM", "USE_HIP", "USE_CUDA", "CUDA_FOUND", "ROCM_FOUND", "HIP_FOUND", "hipcc",
                "nvcc", "offload-arch", "PYTORCH_ROCM_ARCH", "CMAKE_HIP_ARCHITECTURES", "IS_HIP_EXTENSION",
                "ROCM_HOME", "ROCM_VERSION", "torch.version.hip", "torch.version.cuda")
# Not evaluating ROCm truth: `fix` writes HIP code and runs hipcc/nvcc on it; hipify/ names CUDA APIs; example/ is
# the bundled CUDA project a demo scans.
EXEMPT = ("auditor/truth/", "auditor/fix/", "auditor/match/hipify/", "auditor/example/")


def _data_names() -> set[str]:
    data = tomllib.loads(GUARDS)
    names = {n for key in ("rocm_defined", "cuda_only_defined", "rocm_version_macros")
             for n in data["preprocessor"][key]}
    return names | set(data["python"]["cuda_only_env"])


def _code_strings(source: str):
    """(line, text) of every string constant that is not a docstring (comments and docstrings may name a switch:
    they explain, they do not decide)."""
    tree = syntax_tree(source)
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            yield node.lineno, node.value.replace("\\", "")


def test_every_switch_word_is_in_the_data_file():
    assert [w for w in SWITCH_WORDS if w not in GUARDS.replace("\\", "")] == []


@pytest.mark.slow
def test_no_module_outside_truth_names_a_switch_in_code():
    words = sorted(_data_names() | set(SWITCH_WORDS), key=len, reverse=True)
    pattern = re.compile(r"(?<![\w-])(?:" + "|".join(re.escape(w) for w in words) + r")(?!\w)")
    found = []
    for path in sorted((ROOT / "auditor").rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith(EXEMPT):
            continue
        for line, text in _code_strings(path.read_text(encoding="utf-8")):
            if m := pattern.search(text):
                found.append(f"{relative}:{line}: {m.group(0)}")
    # user-facing messages, not tests of anything (compared without their line numbers, which edits move)
    assert [re.sub(r":\d+:", ":", f) for f in found if not f.startswith("auditor/model/project.py")] == [
        "auditor/model/rocmpath/rocmevidence.py: hipcc"]
    assert [f.split(": ")[1] for f in found if f.startswith("auditor/model/project.py")] == ["__HIPCC__"]


def test_the_check_sees_a_hard_coded_switch():
    """The check above can fail: a regex naming USE_ROCM in code is found, a comment or docstring is not."""
    source = '"""USE_ROCM in a docstring."""\nimport re\n# USE_ROCM in a comment\nX = re.compile(r"\\bUSE_ROCM\\b")\n'
    assert [(line, text) for line, text in _code_strings(source) if "USE_ROCM" in text] == [(4, "bUSE_ROCMb")]


@pytest.mark.parametrize(("edit", "said"), [
    (("rocm_ci_pattern", "rocm_ci_patern"), "[markers] rocm_ci_patern: unknown key"),
    (("'--offload-arch|CMAKE_HIP_ARCHITECTURES'", "'(--offload-arch'"), "[cmake] hip_evidence_ranks: missing )"),
    (("rocm_dispatch_words = [", "rocm_dispatch_words = [1, "), "[markers] rocm_dispatch_words: a list of names"),
    (("cuda_compile_pattern = '\\bnvcc", "cuda_compile_patern = '\\bnvcc"), "[make] cuda_compile_patern: unknown"),
])
def test_a_misspelt_or_broken_switch_fails_the_load_naming_it(tmp_path, edit, said):
    text = GUARDS.replace(*edit, 1)
    assert text != GUARDS
    with pytest.raises(SwitchError) as err:
        read_table(text)
    assert said in str(err.value)
    root = tmp_path / "rules"
    shutil.copytree(rules_root(), root)
    (root / "guards.toml").write_text(text, encoding="utf-8")
    with pytest.raises(RuleError, match=re.escape(said)):
        load_rulebook(root)


def test_a_readers_section_without_a_key_fails_the_load():
    text = "\n".join(line for line in GUARDS.splitlines() if not line.startswith("rocm_ci_pattern"))
    with pytest.raises(SwitchError, match=r"\[markers\] is missing rocm_ci_pattern"):
        read_table(text)


def test_the_shipped_switches_are_typed_and_compiled():
    switches = shipped()
    assert isinstance(switches, Switches) == isinstance(Switches.of(read_table(GUARDS)), Switches)
    assert switches.markers.rocm_ci.search("image: rocm/pytorch:latest")
    assert switches.make.rocm_compile.search("\thipcc -o a.out a.cpp") and not switches.make.rocm_compile.search("nvcc")
    assert switches.cmake.hip_evidence_ranks[0].search("enable_language(HIP)")
