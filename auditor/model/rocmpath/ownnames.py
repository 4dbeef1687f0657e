"""The project's own names, read from its build script as text: the distribution `setup.py` names and the
extension modules it builds. Importing or requiring them is never a CUDA-only package finding."""
from __future__ import annotations

import re

SETUP_NAME = re.compile(r"""\bname\s*=\s*(?:["']([A-Za-z0-9_.-]+)["']|([A-Za-z_]\w*)\s*[,)\n])""")


ASSIGNED_NAME = re.compile(r"""^([A-Za-z_]\w*)\s*=\s*["']([A-Za-z0-9_.-]+)["']""", re.MULTILINE)


def setup_names(text: str) -> set[str]:
    """The distribution name setup.py gives: `name="x"`, or `name=PACKAGE_NAME` with `PACKAGE_NAME = "x"` in it."""
    assigned: dict[str, str] | None = None     # read once, when a `name=VARIABLE` needs it
    for m in SETUP_NAME.finditer(text):
        if m.group(1):
            return {m.group(1)}
        if assigned is None:
            assigned = {}
            for a in ASSIGNED_NAME.finditer(text):
                assigned.setdefault(a.group(1), a.group(2))
        if m.group(2) in assigned:
            return {assigned[m.group(2)]}
    return set()


# The project's own extension modules: `CUDAExtension(name="amp_C", …)`, `CppExtension("x", …)`.
EXTENSION_NAME = re.compile(
    r"""\b(?:CUDAExtension|CppExtension|Extension)\s*\(\s*(?:name\s*=\s*)?["']([A-Za-z_][\w.]*)["']""")


def extension_names(text: str) -> set[str]:
    """The project's own extension modules (`CUDAExtension(name="amp_C", …)`): its own package when imported."""
    return {m.group(1).split(".")[0] for m in EXTENSION_NAME.finditer(text)}
