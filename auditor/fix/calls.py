"""Which definition a call reaches, as far as one translation unit shows it: a call reaches a function of its name
whose parameter list takes that many arguments (overloads that differ in their number of parameters are told
apart; overloads with the same number are not, and count as one), and a function template's parameter has, at a
call, the value of the template argument given there or of its default. An identifier used as a value (`HALF_WARP`,
`kWarpSize`) is read where this file defines it as a number (`#define`, a `const`/`constexpr` integer)."""
from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable, Iterator, Mapping

from auditor.parse.cuda import Node

Arity = tuple[int, int | None]   # fewest and most arguments a function takes (None: variadic)
_NAME = re.compile(rb"[A-Za-z_]\w*")
_DEFINE = re.compile(rb"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+\(?[ \t]*(\d+)[uU]?[ \t]*\)?[ \t]*$",
                     re.MULTILINE)
_CONSTANT = re.compile(rb"\b(?:static\s+)?(?:constexpr|const)\s+(?:static\s+)?(?:unsigned\s+|signed\s+)?"
                       rb"(?:int|long|size_t|uint32_t|int32_t|unsigned)?\s*([A-Za-z_]\w*)\s*=\s*(\d+)[uU]?\s*;")
_OPERATORS: Mapping[type, Callable[[int, int], int]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
    ast.RShift: operator.rshift, ast.LShift: operator.lshift}


def arity(function: Node) -> Arity:
    parameters = _parameter_list(function)
    if parameters is None:
        return (0, None)
    required = optional = 0
    for child in parameters.children:
        if child.type == "..." or child.type == "variadic_parameter_declaration":
            return (required, None)
        if child.type == "optional_parameter_declaration":
            optional += 1
        elif child.type == "parameter_declaration" and (child.text or b"").strip() != b"void":
            required += 1
    return (required, required + optional)


def argument_count(call: Node) -> int:
    arguments = call.child_by_field_name("arguments")
    return len([a for a in arguments.named_children if a.type != "comment"]) if arguments is not None else 0


def fits(count: int, takes: Arity) -> bool:
    return takes[0] <= count and (takes[1] is None or count <= takes[1])


def call_key(name: str, count: int) -> str:
    """How a call is keyed in the project-wide lane-limited table: its callee and number of arguments."""
    return f"{name}/{count}"


def limited_for(table: Mapping[str, str], name: str, takes: Arity) -> str | None:
    """Where a call that reaches a function named `name` taking `takes` arguments is lane-limited, from a table keyed
    by call_key (a bare name: a use whose arguments are not known, which reaches every overload)."""
    if where := table.get(name):
        return where
    prefix = name + "/"
    for key, where in table.items():
        if key.startswith(prefix) and key[len(prefix):].isdigit() and fits(int(key[len(prefix):]), takes):
            return where
    return None


def template_parameters(function: Node) -> list[tuple[bytes, bytes | None]]:
    """(name, default) of each template parameter of the function template `function` is the body of."""
    template = function.parent
    if template is None or template.type != "template_declaration":
        return []
    parameters = template.child_by_field_name("parameters")
    found: list[tuple[bytes, bytes | None]] = []
    for parameter in parameters.named_children if parameters is not None else []:
        names = [c for c in parameter.named_children if c.type in ("identifier", "type_identifier")]
        default = parameter.child_by_field_name("default_value") or parameter.child_by_field_name("default_type")
        name = names[0].text if names and names[0] != default else None
        if name:
            found.append((name, default.text if default is not None else None))
    return found


def template_arguments(call: Node) -> list[bytes] | None:
    """The explicit template arguments of a call (`f<16, T>(x)`: [b'16', b'T']), [] without any, None when the
    callee is not a name this module reads."""
    callee = call.child_by_field_name("function")
    while callee is not None and callee.type == "qualified_identifier":
        callee = callee.child_by_field_name("name")
    if callee is None:
        return None
    if callee.type not in ("template_function", "template_method"):
        return [] if callee.type in ("identifier", "field_expression") else None
    arguments = callee.child_by_field_name("arguments")
    return [a.text or b"" for a in arguments.named_children if a.type != "comment"] if arguments is not None else None


def constants(source: bytes) -> dict[bytes, int]:
    """The integer names this file defines: `#define HALF_WARP 16`, `constexpr int kWarpSize = 32;`. A name defined
    twice with different values is left out."""
    found: dict[bytes, int | None] = {}
    for pattern in (_DEFINE, _CONSTANT):
        for match in pattern.finditer(source):
            value = int(match.group(2))
            found[match.group(1)] = value if found.get(match.group(1), value) == value else None
    return {name: value for name, value in found.items() if value is not None}


def merged_constants(tables: list[dict[bytes, int]]) -> dict[bytes, int]:
    """The names every table that defines them gives one value (a project's WARP_SIZE in its common header); a name
    two files define differently (32 for CUDA, 64 in a HIP branch) is left out."""
    found: dict[bytes, int | None] = {}
    for table in tables:
        for name, value in table.items():
            found[name] = value if found.get(name, value) == value else None
    return {name: value for name, value in found.items() if value is not None}


def evaluate(expression: bytes, names: Mapping[bytes, int]) -> int | None:
    """The value of a small integer expression (`W / 2`, `kWarpSize >> 1`) with `names` bound, or None."""
    text = re.sub(rb"(?<=\d)[uU]\b", b"", b" ".join(expression.split())).replace(b"/", b"//")
    if not re.fullmatch(rb"[\w\s()+\-*/<>]*", text) or len(text) > 120:
        return None
    try:
        tree = ast.parse(text.decode(), mode="eval")
    except SyntaxError:
        return None
    return _value(tree.body, names)


def _value(node: ast.expr, names: Mapping[bytes, int]) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.Name):
        return names.get(node.id.encode())
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        left, right = _value(node.left, names), _value(node.right, names)
        if left is None or right is None or (isinstance(node.op, ast.FloorDiv) and right == 0) \
                or (isinstance(node.op, (ast.LShift, ast.RShift)) and not 0 <= right < 64):
            return None
        return _OPERATORS[type(node.op)](left, right)
    return None


def callee_name(call: Node) -> bytes | None:
    """The called function's own name: `warpReduceSum<warp_size>(x)` and `ops::sum<T, 4>(x)` call warpReduceSum
    and sum (template arguments are not the callee)."""
    callee = call.child_by_field_name("function")
    if callee is None:
        return None
    if callee.type in ("template_function", "template_method"):
        callee = callee.child_by_field_name("name") or callee
    names = _NAME.findall((callee.text or b"").split(b"<", 1)[0])
    return names[-1] if names else None


def function_name(function: Node) -> bytes | None:
    declarator = function.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    inner = declarator.child_by_field_name("declarator") if declarator is not None else None
    names = _NAME.findall(inner.text or b"") if inner is not None else []
    return names[-1] if names else None


def nodes_of(root: Node, kind: str) -> Iterator[Node]:
    """Every node of a kind under `root` (root included)."""
    stack = [root]
    while stack:
        current = stack.pop()
        if current.type == kind:
            yield current
        stack.extend(current.named_children)


def _parameter_list(function: Node) -> Node | None:
    declarator = function.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    return declarator.child_by_field_name("parameters") if declarator is not None else None

