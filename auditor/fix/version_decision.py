"""Where `torch.version.cuda` (None on ROCm) decides something, the decision gets its ROCm answer; the value itself
is never replaced by a stand-in, which would flow into the code's own None tests, fallbacks and messages.

A comparison of the version (`torch.version.cuda >= "12.0"`, `Version(torch.version.cuda) < Version("11.8")`,
`int(torch.version.cuda.split(".")[0]) >= 12`, `torch.version.cuda.startswith("12")`) becomes
`torch.version.cuda is not None and <comparison>`: a CUDA-version requirement is not met on ROCm. Where not meeting
it refuses (an `assert`, or an `if` with no `else` that only raises or exits), the answer is the one that lets
ROCm through: `torch.version.cuda is None or <comparison>`. A `== None` / `!= None` vendor test becomes
`(torch.version.cuda or torch.version.hip) != None`. A version kept in a variable, returned or passed on is
not decided where it is read: those are reported, not fixed."""
from __future__ import annotations

import libcst as cst
from libcst.metadata import ParentNodeProvider, PositionProvider

from auditor.types import Finding

MESSAGE_CALLS = {"print", "warn", "warning", "info", "debug", "error", "exception", "critical", "log", "echo"}
_VERSION_PREDICATES = {"startswith", "endswith"}
_REFUSALS = {"exit", "abort", "_exit"}
# nodes a version passes through on its way into a comparison: a call's argument, a method, a subscript
_CARRIERS = (cst.Arg, cst.Call, cst.Attribute, cst.Subscript, cst.SubscriptElement, cst.Index, cst.Tuple,
             cst.Element, cst.BinaryOperation)
_OWN_TEST = (cst.If, cst.While, cst.Assert, cst.BooleanOperation)   # need no parentheses around `a and b`


def dotted(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        inner = dotted(node.value)
        return None if inner is None else f"{inner}.{node.attr.value}"
    return None


class TorchVersionDecision(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (PositionProvider, ParentNodeProvider)

    def __init__(self, wanted: dict[tuple[int, int], Finding]):
        super().__init__()
        self.wanted = wanted
        self.done: dict[tuple[int, int], Finding] = {}
        self.in_text: set[tuple[int, int]] = set()
        self.kept: set[tuple[int, int]] = set()            # read, not decided here: reported only
        self._fstring_depth = 0
        self._none_tests: dict[int, tuple[int, int]] = {}   # id(attribute) -> key
        self._decisions: dict[int, tuple[str, bool, list[tuple[int, int]]]] = {}   # id -> (read, answer, keys)

    def visit_FormattedString(self, node: cst.FormattedString) -> bool:
        self._fstring_depth += 1
        return True

    def leave_FormattedString(self, original: cst.FormattedString, updated: cst.FormattedString) -> cst.FormattedString:
        self._fstring_depth -= 1
        return updated

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        start = self.get_metadata(PositionProvider, node).start
        key = (start.line, start.column)
        name = dotted(node)
        if key not in self.wanted or not name or not name.endswith("version.cuda"):
            return True
        if self._fstring_depth or self._in_message(node):
            self.in_text.add(key)
            return False
        parent = self.get_metadata(ParentNodeProvider, node)
        if _is_none_equality(parent, node):
            self._none_tests[id(node)] = key
            return False
        decision = self._decision(node)
        if decision is None:
            self.kept.add(key)
            return False
        read = cst.Module([]).code_for_node(node)
        entry = self._decisions.setdefault(id(decision), (read, self._rocm_answer(decision), []))
        entry[2].append(key)
        return False

    def leave_Attribute(self, original: cst.Attribute, updated: cst.BaseExpression) -> cst.BaseExpression:
        key = self._none_tests.get(id(original))
        if key is None:
            return updated
        code = cst.Module([]).code_for_node(original)
        self.done[key] = self.wanted[key]
        return cst.parse_expression(f"({code} or {code[: -len('cuda')]}hip)")

    def leave_Comparison(self, original: cst.Comparison, updated: cst.Comparison) -> cst.BaseExpression:
        return self._answered(original, updated)

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        return self._answered(original, updated)

    def _answered(self, original: cst.BaseExpression, updated: cst.BaseExpression) -> cst.BaseExpression:
        found = self._decisions.get(id(original))
        if found is None:
            return updated
        read, answer, keys = found
        for key in keys:
            self.done[key] = self.wanted[key]
        guard = f"{read} is None or" if answer else f"{read} is not None and"
        code = f"{guard} {cst.Module([]).code_for_node(updated)}"
        parent = self.get_metadata(ParentNodeProvider, original, None)
        own_test = isinstance(parent, _OWN_TEST) and not (isinstance(parent, cst.BooleanOperation) and answer)
        return cst.parse_expression(code if own_test else f"({code})")

    def _decision(self, node: cst.CSTNode) -> cst.BaseExpression | None:
        """The comparison (or version predicate call) the read flows into through calls, methods and subscripts,
        or None when the value is kept, returned or passed on first."""
        child, parent = node, self.get_metadata(ParentNodeProvider, node, None)
        while parent is not None:
            if isinstance(parent, cst.Comparison):
                return parent
            if isinstance(parent, cst.Call) and isinstance(parent.func, cst.Attribute) and parent.func is child \
                    and parent.func.attr.value in _VERSION_PREDICATES:
                return parent
            if not isinstance(parent, _CARRIERS):
                return None
            child, parent = parent, self.get_metadata(ParentNodeProvider, parent, None)
        return None

    def _rocm_answer(self, decision: cst.CSTNode) -> bool:
        """The value the decision takes on ROCm: False (a CUDA-version requirement is not met) unless that would
        refuse ROCm: in an assert, or in the test of an `if` whose only branch raises or exits, it lets ROCm on."""
        negated = False
        child, parent = decision, self.get_metadata(ParentNodeProvider, decision, None)
        while isinstance(parent, (cst.UnaryOperation, cst.BooleanOperation)):
            if isinstance(parent, cst.UnaryOperation) and isinstance(parent.operator, cst.Not):
                negated = not negated
            child, parent = parent, self.get_metadata(ParentNodeProvider, parent, None)
        if isinstance(parent, cst.Assert) and parent.test is child:
            return not negated
        if isinstance(parent, cst.If) and parent.test is child and parent.orelse is None and _refuses(parent.body):
            return negated
        return False

    def _in_message(self, node: cst.CSTNode) -> bool:
        """An argument of print/logging/an exception, or formatted into a string: text, not a decision."""
        current = node
        for _ in range(8):
            parent = self.get_metadata(ParentNodeProvider, current, None)
            if parent is None or isinstance(parent, (cst.SimpleStatementLine, cst.IndentedBlock, cst.Module)):
                return False
            if isinstance(parent, cst.Call):
                last = (dotted(parent.func) or "").rsplit(".", 1)[-1]
                if isinstance(parent.func, cst.Attribute) and parent.func.attr.value == "format" and \
                        isinstance(parent.func.value, (cst.SimpleString, cst.ConcatenatedString)):
                    return True
                if last in MESSAGE_CALLS or last.endswith(("Error", "Exception", "Warning")):
                    return True
            if isinstance(parent, cst.BinaryOperation) and isinstance(parent.operator, cst.Modulo) and \
                    isinstance(parent.left, (cst.SimpleString, cst.ConcatenatedString)):
                return True
            current = parent
        return False


def _refuses(body: cst.BaseSuite) -> bool:
    """The block ends in `raise`, `sys.exit(...)` or `exit(...)`."""
    statements = body.body if isinstance(body, cst.IndentedBlock) else [body]
    last = statements[-1] if statements else None
    if not isinstance(last, cst.SimpleStatementLine) or not last.body:
        return False
    final = last.body[-1]
    if isinstance(final, cst.Raise):
        return True
    call = final.value if isinstance(final, cst.Expr) else None
    return isinstance(call, cst.Call) and (dotted(call.func) or "").rsplit(".", 1)[-1] in _REFUSALS


def _is_none_equality(parent: cst.CSTNode, node: cst.CSTNode) -> bool:
    if not isinstance(parent, cst.Comparison) or parent.left is not node:
        return False
    return all(isinstance(t.operator, (cst.Equal, cst.NotEqual)) and dotted(t.comparator) == "None"
               for t in parent.comparisons)
