"""The Python engine's guards: where a ROCm run never goes (`if torch.version.hip:` branches, what follows an
early return under such a test, `try: import X / except ImportError:` fallbacks), and the small AST helpers
they share with the engine."""
from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from auditor.parse.python import PythonTree
from auditor.truth.python import PythonPersona, rocm_truth
from auditor.truth.python import string_value as string_value   # the engine's modules read it here

if TYPE_CHECKING:
    from auditor.match.engines.python.capability import CapabilitySites

IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException", "OSError"}
# what a failed library load or tool probe raises where the CUDA toolkit is absent
LOAD_ERRORS = {"OSError", "FileNotFoundError", "CalledProcessError", "SubprocessError", "Exception", "BaseException"}
# Tests that a package is installed before it is imported: the import behind them is an optional integration.
AVAILABILITY = re.compile(r"(?:^|\.)(?:is_\w+_available|find_spec|_is_package_available|is_available_\w+|has_\w+)$")
EXITS = (ast.Return, ast.Raise, ast.Continue, ast.Break)

Pos = tuple[int, int]
MAX_AVAILABILITY_NAMES = 4   # `b = a and find_spec(...)`, `a = find_spec(...)`: names followed this deep


Located = ast.stmt | ast.expr   # the nodes that carry a position


def start_of(node: Located) -> Pos:
    return node.lineno, node.col_offset


def end_of(node: Located) -> Pos:
    return node.end_lineno or node.lineno, node.end_col_offset or 0


def _region(nodes: Sequence[Located]) -> tuple[Pos, Pos] | None:
    return (start_of(nodes[0]), end_of(nodes[-1])) if nodes else None


def dotted_name(node: ast.AST) -> str | None:
    """`a.b.c`, or None; a loop, so a chain thousands of links long (valid Python) is read like any other."""
    attributes: list[str] = []
    while isinstance(node, ast.Attribute):
        attributes.append(node.attr)
        node = node.value
    return ".".join([node.id, *reversed(attributes)]) if isinstance(node, ast.Name) else None


def _bound(stmt: ast.stmt) -> list[tuple[str, str]]:
    """(local name, qualified name) of each name an import statement binds."""
    if isinstance(stmt, ast.Import):
        return [(a.asname or a.name.split(".")[0], a.name) for a in stmt.names]
    if isinstance(stmt, ast.ImportFrom) and stmt.module and not stmt.level:
        return [(a.asname or a.name, f"{stmt.module}.{a.name}") for a in stmt.names if a.name != "*"]
    return []


def _calls(test: ast.AST, name: str) -> bool:
    """The test is a call of `name`, or an `and` of which one term is."""
    terms = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    return any(isinstance(t, ast.Call) and isinstance(t.func, ast.Name) and t.func.id == name for t in terms)


def _builds_cuda_extension(statements: Sequence[ast.stmt]) -> bool:
    return any(isinstance(n, ast.Call) and (dotted_name(n.func) or "").split(".")[-1] == "CUDAExtension"
               for stmt in statements for n in ast.walk(stmt))


def binds_what_follows_reads(skipped: Sequence[ast.stmt], before: Sequence[ast.stmt],
                             after: Sequence[ast.stmt]) -> bool:
    """A branch ROCm skips is the only binding (no default in the statements `before` it) of a name the statements
    `after` its `if` read (fast-hadamard-transform: `if CUDA_HOME is not None: _, bare_metal_version = ...` then
    `if bare_metal_version >= ...`): on ROCm that name is unbound, so the skipped test is where the port starts."""
    def stored(statements: Sequence[ast.stmt]) -> set[str]:
        return {n.id for stmt in statements for n in ast.walk(stmt)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}

    unbound = stored(skipped) - stored(before) if skipped else set()
    return bool(unbound) and any(isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in unbound
                                 for stmt in after for n in ast.walk(stmt))


class GuardedRegions:
    """Where a ROCm run never goes: branches of `if torch.version.hip:`-style tests, and what follows
    an early `return` under such a test; plus `try: import X / except ImportError:` fallbacks."""

    def __init__(self, tree: PythonTree, section: PythonPersona):
        """`section`: guards.toml's [python] and [persona], typed (auditor/truth/python.py)."""
        self.names = tree.names
        self.persona = section
        self.profile = section.profile("code")
        self.local_cuda: frozenset[str] = frozenset()   # local names bound to a value None on ROCm
        self.regions: list[tuple[Pos, Pos]] = []
        self.import_regions: list[tuple[Pos, Pos]] = []
        self.optional_regions: list[tuple[Pos, Pos]] = []   # TYPE_CHECKING blocks, availability-checked code
        self.fallback_names: set[str] = set()   # qualified names bound only by an except-ImportError fallback
        self.tolerant_regions: list[tuple[Pos, Pos]] = []   # try bodies whose load/probe failure is handled
        self._tree = tree
        self.capabilities: CapabilitySites | None = None   # made when a comparison is first read
        self._tests_rocm: bool | None = None   # some test in the file names ROCm (asked once, when needed)
        self._assigned_once: dict[str, ast.expr] | None = None   # module-level names bound once (when asked)

    def _candidates(self, node: ast.AST) -> set[str]:
        return set(self.names.of(node)) | {dotted_name(node) or ""}

    def truth(self, node: ast.AST) -> bool | None:
        """Truth of an expression on a ROCm build, or None when unknown."""
        return rocm_truth(node, self._atom, self._compare)

    def _compare(self, node: ast.Compare) -> bool | None:
        environ = self.persona.environ_test(node, self._candidates)
        if environ is not None:
            return environ
        if self.capabilities is None:
            from auditor.match.engines.python.capability import CapabilitySites

            self.capabilities = CapabilitySites(self._tree, self.persona)
        return self.capabilities.truth(node)   # `major < 7` is false on every AMD GPU

    def _atom(self, node: ast.AST) -> bool | None:
        names = self._candidates(node.func if isinstance(node, ast.Call) else node)
        return self.persona.atom(node, names, self.profile, cuda=self.local_cuda)

    def availability(self, test: ast.AST, depth: int = 0) -> bool | None:
        """True for `if is_x_available():`/`if TYPE_CHECKING:`/`find_spec(...) is not None`, False for their
        negation, None for anything else; a module-level name assigned such a test once (`fa_installed =
        find_spec("flash_attn") is not None`) is that test."""
        if depth > MAX_AVAILABILITY_NAMES:
            return None
        if isinstance(test, ast.Name) and (value := self._module_values().get(test.id)) is not None:
            return self.availability(value, depth + 1)
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            inner = self.availability(test.operand, depth)
            return None if inner is None else not inner
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.comparators[0], ast.Constant) \
                and test.comparators[0].value is None and isinstance(test.ops[0], (ast.Is, ast.IsNot)):
            inner = self.availability(test.left, depth)
            return None if inner is None else (inner if isinstance(test.ops[0], ast.IsNot) else not inner)
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            return True if any(self.availability(v, depth) is True for v in test.values) else None
        name = dotted_name(test.func if isinstance(test, ast.Call) else test) or ""
        if name.split(".")[-1] == "TYPE_CHECKING":
            return True
        if isinstance(test, ast.Call) and AVAILABILITY.search(name):
            return True
        return None

    def _module_values(self) -> dict[str, ast.expr]:
        """Names the module assigns exactly once at its top level, with the value."""
        if self._assigned_once is None:
            counts: dict[str, int] = {}
            values: dict[str, ast.expr] = {}
            for stmt in self._tree.module.body:
                if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                    name = stmt.targets[0].id
                    counts[name] = counts.get(name, 0) + 1
                    values[name] = stmt.value
            self._assigned_once = {name: value for name, value in values.items() if counts[name] == 1}
        return self._assigned_once

    def visit_availability(self, test: ast.AST, body: Sequence[Located], orelse: Sequence[Located]) -> None:
        value = self.availability(test)
        region = _region(body if value is True else orelse if value is False else [])
        if region:
            self.optional_regions.append(region)

    def visit_branch(self, test: ast.AST, body: Sequence[Located], orelse: Sequence[Located]) -> None:
        value = self.truth(test)
        skipped = body if value is False else orelse if value is True else []
        if value is False and self._only_gpu_build(body, orelse):
            return   # the test is the break (reported by its own rule); the build behind it is what a port opens
        region = _region(skipped)
        if region:
            self.regions.append(region)

    def visit_elif_chain(self, node: ast.If) -> None:
        """`if <cuda build>: … elif torch.version.hip: …`: a later branch that is the ROCm path means the
        earlier ones were written for CUDA, even when their own test cannot be read (`FORCE_CUDA`)."""
        if self.truth(node.test) is not None:
            return
        branch = node.orelse
        while len(branch) == 1 and isinstance(branch[0], ast.If):
            if self.truth(branch[0].test) is True:
                region = _region(node.body)
                if region:
                    self.regions.append(region)
                return
            branch = branch[0].orelse

    def visit_ifexp(self, node: ast.IfExp) -> None:
        self.visit_branch(node.test, [node.body], [node.orelse])

    def visit_boolop(self, node: ast.BoolOp) -> None:
        """`a and b` never evaluates b when a is false on ROCm (and `a or b` when a is true)."""
        stop = False if isinstance(node.op, ast.And) else True
        if stop is True and any(self.truth(v) is True for v in node.values):
            # `CUDA_HOME is not None or torch.version.hip`: true on ROCm whatever the CUDA test gives, and
            # testing a name against None never raises
            for value in node.values:
                if self.truth(value) is not True and (isinstance(value, (ast.Name, ast.Attribute)) or (
                        isinstance(value, ast.Compare) and isinstance(value.left, (ast.Name, ast.Attribute)))):
                    region = _region([value])
                    if region:
                        self.regions.append(region)
        for index, value in enumerate(node.values[:-1]):
            if self.truth(value) is stop:
                region = _region(node.values[index + 1:])
                if region:
                    self.regions.append(region)
                return

    def visit_block(self, statements: list[ast.stmt]) -> None:
        """After `if <true on ROCm>: … return`, the rest of the block is the CUDA path; after
        `if not is_x_available(): return`, the rest is an optional integration."""
        for index, stmt in enumerate(statements[:-1]):
            if isinstance(stmt, ast.If) and not stmt.orelse and stmt.body and isinstance(stmt.body[-1], EXITS) \
                    and self.availability(stmt.test) is False:
                region = _region(statements[index + 1:])
                if region:
                    self.optional_regions.append(region)
                break
        local: set[str] = set()   # `cuda_home = jit._find_cuda_home()` then `if not cuda_home: return False`
        for index, stmt in enumerate(statements[:-1]):
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                    and self.truth(stmt.value) is False:
                local.add(stmt.targets[0].id)
            if isinstance(stmt, ast.If) and not stmt.orelse and stmt.body and isinstance(stmt.body[-1], EXITS) \
                    and self._truth_with(stmt.test, local) is True:
                if isinstance(stmt.body[-1], ast.Raise) and not self._names_rocm(stmt.test):
                    return   # `if CUDA_HOME is None: raise`: a refusal; what follows is what a port makes ROCm run
                region = _region(statements[index + 1:])
                if region:
                    self.regions.append(region)
                return

    def _truth_with(self, test: ast.AST, local_cuda_names: set[str]) -> bool | None:
        """The test's truth with local names bound to a value None on ROCm counted as CUDA-only names."""
        if not local_cuda_names:
            return self.truth(test)
        saved = self.local_cuda
        self.local_cuda = saved | local_cuda_names
        try:
            return self.truth(test)
        finally:
            self.local_cuda = saved

    def _names_rocm(self, test: ast.AST) -> bool:
        """The test names something true on ROCm (`torch.version.hip`), not only the absence of a CUDA one."""
        return any(self.truth(n) is True for n in ast.walk(test) if isinstance(n, (ast.Name, ast.Attribute, ast.Call)))

    def visit_try(self, node: ast.Try) -> None:
        for handler in node.handlers:
            caught: set[str] = set()
            if handler.type is None:
                caught.add("BaseException")
            elif isinstance(handler.type, ast.Tuple):
                caught.update(dotted_name(e) or "" for e in handler.type.elts)
            else:
                caught.add(dotted_name(handler.type) or "")
            short = {c.split(".")[-1] for c in caught}
            if short & LOAD_ERRORS and not (handler.body and isinstance(handler.body[-1], ast.Raise)) \
                    and not self._failure_drops_the_gpu_build(node, handler):
                # `try: ctypes.CDLL("libcudart.so") except OSError: <fallback>` runs on ROCm: the load fails there
                region = _region(node.body)
                if region:
                    self.tolerant_regions.append(region)
            if short & IMPORT_ERRORS:
                if handler.body and isinstance(handler.body[-1], ast.Raise):
                    return   # re-raised: not a fallback
                self._fallback_imports(node.body, handler.body)
                region = _region(node.body)
                if region:
                    self.import_regions.append(region)
                return

    def _fallback_imports(self, body: list[ast.stmt], handler: list[ast.stmt]) -> None:
        """`try: from triton.language.extra.libdevice import tanh / except ImportError: from
        triton.language.extra.cuda.libdevice import tanh`: the handler's import of a name the try also binds is
        the fallback a ROCm run never takes."""
        primary = {local for stmt in body for local, _ in _bound(stmt)}
        for stmt in handler:
            bound = [(local, qualified) for local, qualified in _bound(stmt) if local in primary]
            if bound:
                self.fallback_names.update(qualified for _, qualified in bound)
                region = _region([stmt])
                if region:
                    self.import_regions.append(region)

    def _only_gpu_build(self, body: Sequence[Located], orelse: Sequence[Located]) -> bool:
        """`if 'cu' in torch.__version__ and CUDA_HOME is not None: ext_modules = [CUDAExtension(...)]` with no
        ROCm test anywhere in the file and no CUDAExtension in the other branch: not a CUDA alternative beside a
        ROCm one but the project's only GPU build, which ROCm skips; its flags are what the port makes ROCm run."""
        if not (_builds_cuda_extension(body) and not _builds_cuda_extension(orelse)):  # type: ignore[arg-type]
            return False
        if self._tests_rocm is None:
            self._tests_rocm = any(isinstance(n, (ast.If, ast.IfExp, ast.While)) and self._names_rocm(n.test)
                                   for n in self._tree.nodes)
        return not self._tests_rocm

    def _failure_drops_the_gpu_build(self, node: ast.Try, handler: ast.ExceptHandler) -> bool:
        """`def cuda_toolkit_available(): try: call(["nvcc"]) except FileNotFoundError: return False`, and the
        module builds its CUDAExtensions only `if cuda_toolkit_available():`: where the probe fails (ROCm has no
        nvcc) the install silently leaves every GPU extension out, so the handled failure is the break."""
        if not (len(handler.body) == 1 and isinstance(handler.body[0], ast.Return)
                and isinstance(handler.body[0].value, ast.Constant) and not handler.body[0].value.value):
            return False
        module = self._tree.module
        probe = next((f.name for f in module.body if isinstance(f, ast.FunctionDef)
                      and f.lineno <= node.lineno <= (f.end_lineno or f.lineno)), None)
        return probe is not None and any(
            isinstance(n, ast.If) and _calls(n.test, probe) and _builds_cuda_extension(n.body)
            and not _builds_cuda_extension(n.orelse) for n in self._tree.nodes)

    @staticmethod
    def inside(regions: list[tuple[Pos, Pos]], start: Pos, end: Pos) -> bool:
        return any(a <= start and end <= b for a, b in regions)
