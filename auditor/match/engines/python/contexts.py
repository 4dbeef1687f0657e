"""The syntactic role of a matched reference (compare, argument, test, log, ...), as `contexts` rules ask."""
from __future__ import annotations

import ast
import re

from auditor.match.engines.python.nonetested import reads_handle_none
from auditor.match.engines.python.guards import (
    EXITS, GuardedRegions, binds_what_follows_reads, dotted_name, end_of, start_of,
)
from auditor.parse.python import PythonTree
from auditor.types import Rule

# compiler and linker arguments of an Extension: setuptools' setup() has no such option and ignores them there
EXTENSION_ONLY_KEYWORDS = frozenset({"extra_compile_args", "extra_link_args"})
# calls that declare a command-line option of the program itself (argparse, optparse, click)
OPTION_DECLARATIONS = frozenset({"add_argument", "add_option", "option"})
LOG_CALL = re.compile(r"^(?:print|warnings\.warn|(?:\w+\.)*(?:log(?:ger|ging)?|_?LOG(?:GER)?)\."
                      r"(?:debug|info|warning|warn|error|critical|exception|log)"
                      r"|(?:\w+\.)*(?:print_rank_0|log_dist|print0))$")


# a branch that builds or loads an extension: skipping it on ROCm drops the extension (`if CUDA_HOME is not None:
# ext_modules.append(CUDAExtension(...))`), which is the port's problem, not a harmless test
BUILDS = re.compile(r"(?:^|\.)(?:\w*Extension|setup|load|load_inline)$")
# calls that turn a value into text, and methods that file a value away in a collection
STRINGIFIERS = frozenset({"str", "repr", "join", "format"})
COLLECTORS = frozenset({"append", "extend", "add", "insert", "setdefault"})
# nodes a value passes through on its way into text (a call's argument, a comprehension's iterable, an f-string)
CARRIERS = (ast.Call, ast.keyword, ast.comprehension, ast.GeneratorExp, ast.ListComp, ast.FormattedValue,
            ast.JoinedStr, ast.BinOp, ast.Subscript, ast.Starred)


class SyntacticContexts:
    """Mixed into the engine: reads only `self.tree` (the parent map is built on the first call)."""

    tree: PythonTree
    guards: GuardedRegions

    def _context(self, node: ast.AST) -> str:
        context = self._syntactic_context(node)
        if context in ("argument", "format") and self._in_log_call(node):
            return "log"
        if context == "other" and self._in_record(node):
            return "log"   # a value kept in a record ({"cuda": torch.version.cuda}), shown, not tested
        if context == "other" and self.guards.truth(node) is False and isinstance(self.tree.parent(node), ast.Assign) \
                and reads_handle_none(self.tree, self._reads_of_assigned(node)):
            return "test"   # `v = torch.version.cuda` read only behind `if v and ...` or after `if not v: v = ...`
        if context == "argument" and self._call_name(self.tree.parent(node)) == "bool":
            return "test"
        if context in ("test", "compare") and self._only_messages_follow(node):
            return "log"   # `elif CUDA_HOME is None: warnings.warn(...)  else: warnings.warn(...)`: picks a message
        if context in ("test", "compare") and self._rocm_takes_a_harmless_branch(node):
            return "harmless-test"   # `if CUDA_HOME and os.path.isdir(...):` with no else: ROCm just skips it
        if self._only_displayed(node):
            return "log"   # `cap = ".".join(str(x) for x in get_device_capability(k))`, shown in a device label
        reads = self._reads_of_assigned(node) if context in ("test", "compare", "format") else None
        if reads and context != "format" and all(self._only_messages_follow(r) for r in reads):
            return "log"   # `newer = any(p.major >= 8 ...)` then only `if not newer: print(...)`: a message
        return context

    def _reads_of_assigned(self, node: ast.AST) -> list[ast.Name]:
        """Where the value of the statement `name = <expression holding node>` is read, in the same function (or
        module): the loads of that name after the assignment. Empty when the statement is anything else."""
        stmt = self.tree.parent(node)
        while stmt is not None and not isinstance(stmt, ast.stmt):
            stmt = self.tree.parent(stmt)
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
            return []
        name, scope = stmt.targets[0].id, self.tree.parent(stmt)
        while scope is not None and not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
            scope = self.tree.parent(scope)
        after = stmt.end_lineno or stmt.lineno
        return [n for n in self.tree.reads_of(name, scope or stmt) if n.lineno > after]

    def _only_displayed(self, node: ast.AST, depth: int = 2) -> bool:
        """Turned into text (str(), join, format, an f-string, `%`) assigned to a name whose every read only shows
        it: printed or logged, formatted into another such name, kept in a record, or the key under which
        something is filed (`devices[name].append(k)`): a label, not a decision (detectron2's collect_env)."""
        if not self._stringified_into(node):
            return False
        reads = self._reads_of_assigned(node)
        return bool(reads) and all(self._displayed(read, depth) for read in reads)

    def _stringified_into(self, node: ast.AST) -> bool:
        """The node's value reaches the right side of `name = ...` only through carriers, made text on the way."""
        child, parent, text = node, self.tree.parent(node), False
        while isinstance(parent, CARRIERS):
            if isinstance(parent, ast.FormattedValue) or isinstance(parent, ast.BinOp) and isinstance(
                    parent.op, ast.Mod) and isinstance(parent.left, ast.Constant) \
                    and isinstance(parent.left.value, str):
                text = True
            elif isinstance(parent, ast.Call) and parent.func is not child:
                text = text or self._call_name(parent).split(".")[-1] in STRINGIFIERS or isinstance(
                    parent.func, ast.Attribute) and parent.func.attr in STRINGIFIERS
            child, parent = parent, self.tree.parent(parent)
        return text and isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(
            parent.targets[0], ast.Name) and parent.value is child

    def _displayed(self, read: ast.Name, depth: int) -> bool:
        if self._in_log_call(read) or self._in_record(read) or self._filed(read):
            return True
        return depth > 0 and self._only_displayed(read, depth - 1)

    def _filed(self, read: ast.Name) -> bool:
        """A key something is stored under (`d[read] = v`, `d[read].append(v)`), or an item of a tuple (a record
        row) handed to a collection's `append`/`add`: kept, not compared."""
        parent = self.tree.parent(read)
        if isinstance(parent, ast.Subscript) and parent.slice is read:
            if isinstance(parent.ctx, ast.Store):
                return True
            method = self.tree.parent(parent)
            return isinstance(method, ast.Attribute) and method.attr in COLLECTORS and isinstance(
                self.tree.parent(method), ast.Call)
        if not isinstance(parent, ast.Tuple):
            return False   # a bare value or a list handed on (`flags.append(arch)`) may be a command line
        while isinstance(parent, ast.Tuple):
            parent = self.tree.parent(parent)
        return isinstance(parent, ast.Call) and isinstance(parent.func, ast.Attribute) and \
            parent.func.attr in COLLECTORS

    def _read_only_where_guarded(self, node: ast.AST) -> bool:
        """`archs = ["-gencode=...", ...]` whose every read sits where a ROCm run never goes (the else of `if
        torch.version.hip:`): the value only feeds the CUDA branch, as guarded as its uses."""
        reads = self._reads_of_assigned(node)
        return bool(reads) and all(GuardedRegions.inside(self.guards.regions, start_of(r), end_of(r)) for r in reads)

    def _rocm_takes_a_harmless_branch(self, node: ast.AST) -> bool:
        """Tested (safely: for None, truth, equality) by an `if` whose outcome on ROCm is known and whose branch
        taken there is empty or only prints, logs or warns: the test itself breaks nothing (a branch that raises,
        returns or assigns is what a port must look at, and stays reported)."""
        test = self._if_testing(node)
        if test is None:
            return False
        value = self.guards.truth(test.test)
        if value is None:
            return False
        taken, skipped = (test.body, test.orelse) if value else (test.orelse, test.body)
        if skipped and isinstance(skipped[-1], EXITS) and not self._messages(self._after(test)):
            return False   # apex: `if CUDA_HOME is not None: return` then `raise`: ROCm goes on to the raise
        return (not taken or self._messages(taken)) and not self._binds_what_follows_reads(test, skipped) \
            and not any(isinstance(n, ast.Call) and BUILDS.search(dotted_name(n.func) or "")
                        for stmt in skipped for n in ast.walk(stmt))

    def _after(self, test: ast.If) -> list[ast.stmt]:
        """The statements after the `if` in its block."""
        block = self.tree.parent(test)
        siblings = next((b for b in (getattr(block, "body", None), getattr(block, "orelse", None))
                         if isinstance(b, list) and test in b), [])
        return siblings[siblings.index(test) + 1:] if test in siblings else []

    def _binds_what_follows_reads(self, test: ast.If, skipped: list[ast.stmt]) -> bool:
        block = self.tree.parent(test)
        siblings = next((b for b in (getattr(block, "body", None), getattr(block, "orelse", None))
                         if isinstance(b, list) and test in b), [])
        if test not in siblings:
            return False
        index = siblings.index(test)
        return binds_what_follows_reads(skipped, siblings[:index], siblings[index + 1:])

    def _if_testing(self, node: ast.AST, text_tests: bool = False) -> ast.If | None:
        """The `if` whose test evaluates the node without any step that may fail on ROCm (a call such as
        `parse(torch.version.cuda)` may: then None)."""
        def evaluates_safely(parent: ast.AST | None) -> bool:   # even where the value is None on ROCm
            if isinstance(parent, (ast.BoolOp, ast.UnaryOp)):
                return True
            if isinstance(parent, ast.Compare):
                return all(isinstance(op, (ast.Is, ast.IsNot, ast.Eq, ast.NotEq)) for op in parent.ops)
            return text_tests and isinstance(parent, ast.Call) and isinstance(parent.func, ast.Attribute) \
                and parent.func.attr in ("startswith", "endswith")

        child: ast.AST = node
        parent = self.tree.parent(node)
        while parent is not None and evaluates_safely(parent):
            child, parent = parent, self.tree.parent(parent)
        return parent if isinstance(parent, ast.If) and parent.test is child else None

    def _messages(self, body: list[ast.stmt]) -> bool:
        """Every statement (of every branch of a nested `if`) only prints, logs or warns."""
        if len(body) == 1 and isinstance(body[0], ast.If):
            return self._messages(body[0].body) and self._messages(body[0].orelse)
        return all(isinstance(stmt, ast.Pass) or isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
                   and bool(LOG_CALL.match(self._call_name(stmt.value))) for stmt in body)

    def _only_messages_follow(self, node: ast.AST, text_tests: bool = False) -> bool:
        """Compared or tested in the test of an `if` whose every branch (elif and else included) only prints, logs
        or warns. `text_tests`: a string may also be what `startswith`/`endswith` look for
        (`name.startswith("NVIDIA A100")`)."""
        test = self._if_testing(node, text_tests)
        return test is not None and self._messages(test.body) and self._messages(test.orelse)

    def _in_record(self, node: ast.AST) -> bool:
        """A dict value, or an item of a tuple/list that is itself kept in a collection (not compared)."""
        parent = self.tree.parent(node)
        if isinstance(parent, ast.Dict):
            return True
        return isinstance(parent, (ast.Tuple, ast.List)) and isinstance(
            self.tree.parent(parent), (ast.List, ast.Tuple, ast.Dict, ast.Set))

    def _call_name(self, node: ast.AST | None) -> str:
        if isinstance(node, ast.keyword):
            node = self.tree.parent(node)
        return dotted_name(node.func) or "" if isinstance(node, ast.Call) else ""

    def _string_context_ok(self, rule: Rule, node: ast.AST) -> bool:
        """For a string, `contexts` tells messages (`log`), set members and compared values from everything else."""
        contexts = rule.python.contexts
        if not contexts:
            return True
        parent = self.tree.parent(node)
        if "member" not in contexts and self._in_set(node, parent):
            return False
        if "compare" not in contexts and isinstance(parent, ast.Compare):
            return False   # `"CUDA_PATH" in os.environ`: a presence test, which guards what it tests
        if isinstance(parent, ast.Call) and node in parent.args \
                and self._call_name(parent).split(".")[-1] in OPTION_DECLARATIONS:
            return False   # `parser.add_argument("--threads", ...)`: the program's own option, not a tool's flag
        if self._setup_keyword(node) in EXTENSION_ONLY_KEYWORDS:
            return False   # `setup(extra_compile_args={"nvcc": [...]})`: setup() ignores it (hqq's setup_cuda.py)
        return "log" in contexts or not (self._in_log_call(node) or self._only_messages_follow(node, text_tests=True))

    def _setup_keyword(self, node: ast.AST) -> str:
        """The keyword of a `setup(...)` call the value sits in, through lists, tuples and dict values only ("" when
        it is not, or when an Extension call or anything else comes between)."""
        parent = self.tree.parent(node)
        while isinstance(parent, (ast.List, ast.Tuple, ast.Dict)):
            parent = self.tree.parent(parent)
        if not isinstance(parent, ast.keyword) or parent.arg is None:
            return ""
        return parent.arg if self._call_name(parent).split(".")[-1] == "setup" else ""

    def _in_set(self, node: ast.AST, parent: ast.AST | None) -> bool:
        """An element of a set display, or of the collection given to set()/frozenset(): a value looked for (flags
        a build strips, names it accepts), never an ordered command line or a call."""
        if isinstance(parent, ast.Set):
            return True
        if isinstance(parent, (ast.Tuple, ast.List)):
            parent = self.tree.parent(parent)
        return (isinstance(parent, ast.Call) and parent.func is not node
                and dotted_name(parent.func) in ("set", "frozenset"))

    def _in_log_call(self, node: ast.AST) -> bool:
        """Passed (directly or through an f-string) to print, logging or warnings, or to the exception a `raise`
        builds (`raise ValueError(f"needs CUDA, got {torch.version.cuda=}")`): a message, not logic."""
        parent = self.tree.parent(node)
        while isinstance(parent, (ast.FormattedValue, ast.JoinedStr, ast.keyword, ast.Tuple, ast.BinOp)):
            parent = self.tree.parent(parent)
        if not isinstance(parent, ast.Call):
            return False
        raised = self.tree.parent(parent)
        return bool(LOG_CALL.match(self._call_name(parent))) or isinstance(raised, ast.Raise) and raised.exc is parent

    def _syntactic_context(self, node: ast.AST) -> str:
        parent = self.tree.parent(node)
        if self._in_set(node, parent):
            return "member"
        if isinstance(parent, ast.Call) and parent.func is node:
            return "format" if isinstance(self.tree.parent(parent), ast.FormattedValue) else "call"
        if isinstance(parent, ast.FormattedValue):
            return "format"
        if isinstance(parent, ast.Attribute) and parent.value is node:
            return "attribute"
        if isinstance(parent, ast.Compare):
            is_none = all(isinstance(op, (ast.Is, ast.IsNot)) for op in parent.ops) and all(
                isinstance(c, ast.Constant) and c.value is None for c in parent.comparators
            )
            return "test" if is_none else "compare"
        if isinstance(parent, (ast.Call, ast.keyword)):
            return "argument"
        if isinstance(parent, (ast.If, ast.While, ast.IfExp, ast.Assert)) and getattr(parent, "test", None) is node:
            return "test"
        if isinstance(parent, ast.BoolOp) or (isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not)):
            return "test"
        return "other"
