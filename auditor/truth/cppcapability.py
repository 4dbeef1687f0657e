"""A C/C++ runtime comparison of a GPU's compute capability (`cc_major < 8`, `prop.major >= 9`,
`sm_version == 80`), evaluated on every AMD GPU of the ROCm persona with the Python evaluator's semantics
(auditor/truth/capability.py): HIP fills `major`/`minor` (and the capability attributes) from the gfx generation.
An ordering test true or false on every AMD GPU picks the same side for all of them and is no finding; one that
depends on the GPU, a lower bound at an NVIDIA-only architecture, and an equality or allow-list test no AMD GPU
passes are; a comparison the persona cannot compute stays one."""
from __future__ import annotations

import ast
import re

from auditor.truth.capability import CapabilityEvaluator
from auditor.truth.python import PythonPersona, dotted

OPERATORS = frozenset({">=", ">", "==", "<", "<=", "!="})
NUMBER = re.compile(r"^\s*(\d+)[uUlL]*\s*$")
CAPABILITY = "torch.cuda.get_device_capability()"
# what the compared name holds: the major, the minor, or `major * 10 + minor` (an SM number)
MINOR = re.compile(r"(?i)minor")
MAJOR = re.compile(r"(?i)major")


def _quantity(name: str, bound: int) -> str | None:
    if MINOR.search(name):
        return f"{CAPABILITY}[1]"
    if MAJOR.search(name) or bound < 20:
        return f"{CAPABILITY}[0]"
    return f"({CAPABILITY}[0] * 10 + {CAPABILITY}[1])" if bound < 200 else None


def cpp_capability_decides(left: str, operator: str, right: str, persona: PythonPersona) -> bool:
    """Whether `left operator right` (a capability name against a number) is a finding on AMD GPUs."""
    number = NUMBER.match(right)
    if operator not in OPERATORS or number is None or not persona.gpus:
        return True
    quantity = _quantity(left, int(number.group(1)))
    if quantity is None:
        return True
    compare = ast.parse(f"{quantity} {operator} {int(number.group(1))}", mode="eval").body
    assert isinstance(compare, ast.Compare)
    evaluator = CapabilityEvaluator(persona, lambda node: (dotted(node),), lambda name: None)
    return evaluator.decides(compare) is not None
