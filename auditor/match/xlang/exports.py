"""What a C/C++ file tells the cross-language link, read during its one scan: the ops it registers for Python
(pybind11 `PYBIND11_MODULE(name, m) { m.def("op", &fn); }`, `TORCH_LIBRARY(ns, m) { m.def("op(Tensor x) -> …") }`,
`TORCH_LIBRARY_IMPL(ns, CUDA, m) { m.impl("op", &fn); }`), the functions it defines and the headers it includes
by a quoted path."""
from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence

# the registration blocks: the macro, the module (or operator namespace) it names and the variable of the block
BLOCK = re.compile(r"\b(PYBIND11_MODULE|TORCH_LIBRARY(?:_FRAGMENT)?|TORCH_LIBRARY_IMPL)\s*\(\s*(\w+)\s*,"
                   r"(?:\s*\w+\s*,)?\s*(\w+)\s*\)")
# `m.def("op"…` / `m.impl("op"…`: a variable directly (chained `.def(` of a `py::class_` is a method, not an op)
REGISTRATION = re.compile(r"\b(\w+)[ \t]*\.[ \t]*(?:def|impl)[ \t]*\([ \t\n]*\"([A-Za-z_]\w{0,127})")
# after the op's string: the function it binds, `&ns::fn`, `TORCH_FN(fn)`, `py::overload_cast<…>(&fn)` or `fn`
BOUND = re.compile(r"[^\"\n]{0,400}\"[ \t\n]*,[ \t\n]*(?:TORCH_FN[ \t]*\([ \t]*|py::overload_cast<[^>\n]{0,200}>"
                   r"[ \t]*\([ \t]*)?&?[ \t]*([A-Za-z_][\w:]{0,255})")
QUOTED_INCLUDE = re.compile(r"^\"([^\"\n]{1,255})\"$")
NEEDLES = ("PYBIND11_MODULE", "TORCH_LIBRARY")
UNNAMED = "TORCH_EXTENSION_NAME"   # the name torch.utils.cpp_extension passes: the build decides it

Export = tuple[str, str, str, int]   # (module, op, function bound or "", line)


def exports(text: str) -> tuple[Export, ...]:
    """Each op the file registers: module `name` (pybind11), `torch.ops.NS` (a TORCH_LIBRARY namespace), or ""
    when the module is TORCH_EXTENSION_NAME (the build's extension name, which `index` reads from setup.py)."""
    if not any(needle in text for needle in NEEDLES):
        return ()
    blocks = [(m.start(), _module(m.group(1), m.group(2)), m.group(3)) for m in BLOCK.finditer(text)]
    out: list[Export] = []
    for m in REGISTRATION.finditer(text):
        block = next((b for b in reversed(blocks) if b[0] < m.start()), None)
        if block is None or block[2] != m.group(1):
            continue
        bound = BOUND.match(text, m.end())
        function = bound.group(1).split("::")[-1] if bound else ""
        out.append((block[1], m.group(2), function, text.count("\n", 0, m.start()) + 1))
    return tuple(dict.fromkeys(out))


def _module(macro: str, name: str) -> str:
    if name == UNNAMED:
        return "" if macro == "PYBIND11_MODULE" else "torch.ops."
    return name if macro == "PYBIND11_MODULE" else f"torch.ops.{name}"


Function = tuple[str, int, int, tuple[str, ...]]   # (name, first line, last line, the names it calls)


def defined_functions(functions: Sequence, calls: Sequence, text_of) -> tuple[Function, ...]:
    """Each function the file defines, by the last component of its name (`ns::fwd` -> `fwd`), with its lines
    and the names it calls (`fwd_cuda<at::Half>(…)` -> `fwd_cuda`): the inventory's definitions and calls."""
    named = [(name, node) for node in functions if (name := _name(node, text_of))]
    if not named:
        return ()   # a header of declarations: its calls need not be read
    called: dict[str, str] = {}   # a file calls the same names many times

    def callee(node) -> str:
        text = text_of(node)
        if text not in called:
            called[text] = _called(text)
        return called[text]

    starts = sorted((node.start_byte, callee(node)) for node in calls)
    keys = [start for start, _ in starts]
    out: list[Function] = []
    for name, node in named:
        first, last = bisect_left(keys, node.start_byte), bisect_right(keys, node.end_byte)
        callees = tuple(sorted({c for _, c in starts[first:last] if c and c != name}))
        out.append((name, node.start_point[0] + 1, node.end_point[0] + 1, callees))
    return tuple(sorted(out))


def _name(node, text_of) -> str:
    declarator = node.child_by_field_name("declarator")
    for _ in range(8):   # through pointer and reference declarators to the function's own
        if declarator is None or declarator.type == "function_declarator":
            break
        declarator = declarator.child_by_field_name("declarator")
    if declarator is None or declarator.type != "function_declarator":
        return ""
    inner = declarator.child_by_field_name("declarator")
    name = text_of(inner).split("::")[-1].strip() if inner is not None else ""
    return name if name.isidentifier() else ""


def _called(text: str) -> str:
    name = text.split("<", 1)[0].replace("->", ".").split(".")[-1].split("::")[-1].strip()
    return name if name.isidentifier() else ""


def quoted_includes(inventory: Mapping[str, Sequence], text_of) -> tuple[str, ...]:
    """The `#include "path"` paths (a project's own headers; `<…>` ones are the system's)."""
    out = []
    for node in inventory.get("include", ()):
        m = QUOTED_INCLUDE.match(text_of(node).strip())
        if m:
            out.append(m.group(1))
    return tuple(dict.fromkeys(out))
