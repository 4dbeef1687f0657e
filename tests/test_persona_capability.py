"""The ROCm persona evaluates a compute capability rather than matching it (auditor/truth/python.py, engines/python/
capability.py): each comparison a capability read reaches is evaluated on every AMD GPU of guards.toml's
[persona]; only a comparison that depends on the GPU, or an equality/allow-list test no AMD GPU passes, is a
finding, and it is reported at the comparison. A value never compared decides nothing."""
from __future__ import annotations

import ast
import shutil

import pytest

from auditor.match.rulebook import load_rulebook, rules_root
from auditor.run.scan.file import scan_text_as
from auditor.truth.capability import CapabilityEvaluator, Outcome
from auditor.truth.python import shipped_persona
from tests.conftest import write_tree

RULEBOOK = load_rulebook()
CAPABILITY_RULE = next(r.id for r in RULEBOOK.rules if getattr(r.python, "capability", False))

MODULE = (
    "import torch\n"
    "def feature_gate():\n"
    "    major, _ = torch.cuda.get_device_capability()\n"             # 3: read, not reported
    "    return major >= 8\n"                                         # 4: true on every AMD GPU
    "def old_gpu_refusal():\n"
    "    if torch.cuda.get_device_capability()[0] < 7:\n"             # 6: false on every AMD GPU
    "        raise RuntimeError('too old')\n"
    "def hopper_refusal():\n"
    "    capability = torch.cuda.get_device_capability()\n"
    "    if capability < (9, 0):\n"                                   # 10: false on every AMD GPU
    "        raise RuntimeError('needs Hopper')\n"
    "def is_hopper():\n"
    "    major, minor = torch.cuda.get_device_capability()\n"         # 13: read, not reported
    "    return major == 9\n"                                         # 14: MI300X yes, RDNA3 no: reported
    "def tuned():\n"
    "    props = torch.cuda.get_device_properties(0)\n"
    "    return (props.major, props.minor) in [(8, 0), (8, 6)]\n"     # 17: no AMD GPU in it: reported
    "def supported():\n"
    "    major, minor = torch.cuda.get_device_capability()\n"
    "    sm = major * 10 + minor\n"
    "    name = torch.cuda.get_device_name()\n"
    "    return sm in [75, 80, 86]\n"                                 # 22: reported, four lines after the read
    "_KERNELS = {}\n"
    "def cached(name):\n"
    "    key = (name, torch.cuda.get_device_capability())\n"          # 25: a cache key: nothing
    "    if key not in _KERNELS:\n"
    "        _KERNELS[key] = name\n"
    "    print(torch.cuda.get_device_capability())\n"                 # 28: printed: nothing
    "def vendor_branch():\n"
    "    if torch.version.hip:\n"
    "        return torch.cuda.get_device_properties(0).gcnArchName == 'gfx942'\n"
    "    return torch.cuda.get_device_capability() == (8, 9)\n"       # 32: the CUDA branch: guarded
)


def _lines(code: str, rulebook=RULEBOOK) -> dict[int, bool]:
    result = scan_text_as("pkg/gpu.py", "python", code, rulebook)
    assert result.error is None
    return {f.span.line: f.guarded for f in result.findings if f.rule_id == CAPABILITY_RULE}


def test_a_capability_is_reported_where_a_comparison_misfires_on_amd_gpus():
    assert _lines(MODULE) == {14: False, 17: False, 22: False, 32: True}


@pytest.mark.parametrize(("test", "outcome"), [
    ("torch.cuda.get_device_capability()[0] >= 8", Outcome.ALWAYS_TRUE),
    ("torch.cuda.get_device_capability() < (7, 0)", Outcome.ALWAYS_FALSE),
    ("torch.cuda.get_device_capability() >= (10, 0)", Outcome.DEPENDS),
    ("torch.cuda.get_device_properties(0).major == 9", Outcome.DEPENDS),
    ("f'{torch.cuda.get_device_capability()[0]}.{torch.cuda.get_device_capability()[1]}' in {'8.0': 1, '9.0': 2}",
     Outcome.DEPENDS),
    ("torch.cuda.get_device_properties(0).gcnArchName.startswith('gfx9')", Outcome.DEPENDS),
    ("torch.cuda.get_device_capability() >= threshold", Outcome.UNKNOWN),
])
def test_a_comparison_is_evaluated_on_every_gpu_of_the_persona(test, outcome):
    evaluator = CapabilityEvaluator(shipped_persona(), lambda node: {ast.unparse(node)}, lambda name: None)
    assert evaluator.outcome(ast.parse(test, mode="eval").body) is outcome


def test_the_amd_gpus_are_data(tmp_path):
    """A persona of MI300-class GPUs only: `major == 9` is then true on all of them and no longer a finding, while
    an allow-list without them still is."""
    root = tmp_path / "rules"
    shutil.copytree(rules_root(), root)
    guards = root / "guards.toml"
    text = guards.read_text()
    start = text.index("gpus = [")
    end = text.index("]\n", text.index("gfx1200")) + 2
    guards.write_text(text[:start] + 'gpus = [{ arch = "gfx942", capability = [9, 4] }]\n' + text[end:])
    assert _lines(MODULE, load_rulebook(root)) == {17: False, 22: False, 32: True}


def test_a_capability_formatted_into_a_table_key_is_reported_at_the_lookup_test(tmp_path, run_json):
    """A table keyed by f"{major}.{minor}" holds MI200's "9.0" but not MI300X's "9.4": the membership test
    depends on the GPU (reported there, not at the read); a comparison that only decides a warning is none."""
    root = write_tree(tmp_path / "repo", {
        "pyproject.toml": "[project]\nname = \"pkg\"\nversion = \"1\"\ndependencies = [\"torch\"]\n",
        "pkg/__init__.py": "",
        "pkg/shm.py": (
            "import torch\n"
            "shm_size_dict = {'8.0': 163000, '9.0': 227000}\n"
            "cc = f'{torch.cuda.get_device_properties(0).major}.{torch.cuda.get_device_properties(0).minor}'\n"
            "if cc not in shm_size_dict:\n    raise NotImplementedError\n"
            "shm_size_cap = shm_size_dict[cc]\n"),
        "pkg/attn.py": (
            "import torch\n"
            "newer = any(torch.cuda.get_device_properties(i).major == 8 for i in range(torch.cuda.device_count()))\n"
            "if not newer:\n    print('unsupported GPUs were detected')\n"),
    })
    _, report = run_json(root, "--fail-on", "never", "--no-cache")
    found = [(f["path"], f["line"], f["disposition"]) for f in report["findings"] if f["rule"] == CAPABILITY_RULE]
    assert found == [("pkg/shm.py", 4, "live")]


def test_engine_and_build_reader_share_the_persona_atoms():
    """`torch.cuda.is_available()` is true for the ROCm user, for package code and setup.py alike."""
    from auditor.model.rocmpath.pytruth import Truth

    test = "torch.cuda.is_available() and torch.version.cuda is None"
    assert Truth(set()).of(ast.parse(test, mode="eval").body) is True
    code = f"import torch\nif {test}:\n    pass\nelse:\n    import pycuda.driver\n"
    result = scan_text_as("pkg/mod.py", "python", code, RULEBOOK)
    assert {f.span.line: f.guarded for f in result.findings} == {5: True}


@pytest.mark.parametrize(("test", "guarded"), [
    ("torch.cuda.get_device_capability()[0] < 7", {4: True, 6: False}),     # an old-GPU branch no AMD GPU takes
    ("major >= 8", {4: False, 6: True}),                                    # a feature gate every AMD GPU passes
    ("major == 9", {4: False, 6: False}),                                   # depends on the GPU: both reached
])
def test_a_capability_test_decides_which_branch_rocm_takes(test, guarded):
    code = ("import torch\nmajor, minor = torch.cuda.get_device_capability()\n"
            f"if {test}:\n    import pycuda.driver\nelse:\n    import pycuda.autoinit\n")
    result = scan_text_as("pkg/mod.py", "python", code, RULEBOOK)
    assert {f.span.line: f.guarded for f in result.findings if f.rule_id != CAPABILITY_RULE} == guarded


HOPPER_GATES = (
    "import torch\n"
    "def fp8_kv_cache():\n"
    "    return torch.cuda.get_device_capability() >= (9, 0)\n"     # 3: every AMD GPU passes a Hopper bound
    "def sm90():\n"
    "    major, minor = torch.cuda.get_device_capability()\n"
    "    return major * 10 + minor >= 90\n"                          # 6: the same bound as an SM number
    "def bf16():\n"
    "    return torch.cuda.get_device_capability() >= (8, 0)\n"      # 8: Ampere features: AMD has them
    "def after_ampere():\n"
    "    return torch.cuda.get_device_capability()[0] > 8\n"         # 10: a strict bound past Ampere is Hopper's
    "def tf32():\n"
    "    cap = torch.cuda.get_device_capability()\n"
    "    scaled = cap[0] * 100 + cap[1] * 10\n"
    "    return scaled >= 800\n"                                    # 14: Ampere's bound on another scale
    "def fp8():\n"
    "    cap = torch.cuda.get_device_capability()\n"
    "    return cap[0] * 100 + cap[1] * 10 >= 900\n"                # 17: Hopper's bound on that scale
)


def test_a_bound_every_amd_gpu_passes_at_an_nvidia_only_architecture_is_reported():
    """`>= (9, 0)` is true on every AMD GPU (they report major 9 and above) and routes them into the Hopper path;
    `>= (8, 0)` is true too, and the Ampere features behind it exist on AMD GPUs."""
    assert _lines(HOPPER_GATES) == {3: False, 6: False, 10: False, 17: False}
