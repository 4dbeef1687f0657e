"""No module-level mutable state in auditor/: a run's indexes, gates and compiled queries live in its
context (auditor/run/pipeline/context.py, auditor/match/rulebook/context.py), not in module globals that one run leaves
behind for the next. Read with `ast`; the few exceptions are listed below, each with the reason it must be
process-wide. A memoised function (functools.cache / lru_cache) must be a pure function of immutable inputs, and is
listed with the argument for it, so a new one is argued for in review."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.codebase import syntax_tree

REPO = Path(__file__).resolve().parent.parent
AUDITOR = REPO / "auditor"

MUTATORS = {"append", "add", "update", "clear", "pop", "setdefault", "extend", "insert", "remove", "discard",
            "popitem", "appendleft", "sort", "reverse", "__setitem__"}
CONTAINERS = {"dict", "list", "set", "defaultdict", "OrderedDict", "Counter", "deque", "bytearray", "count",
              "WeakValueDictionary", "WeakKeyDictionary"}

# (module, name): why it is process-wide state by nature.
PROCESS_STATE = {
    ("auditor/run/runner/workers.py", "_Worker"):
        "a worker process's own copy of the run's scan context, set once by the process pool's initializer (the "
        "one way ProcessPoolExecutor hands a worker per-process data); the parent never reads it",
    ("auditor/run/runner/isolate.py", "Watchdog"):
        "one watchdog thread per process ends a scan stuck in C code; the deadline it watches is the process's",
    ("auditor/cli/fleet/tasks.py", "_RUNNING"):
        "the scan processes this process started, which its interrupt handling must end (stop_all): a signal "
        "reaches the process, not a run",
    ("auditor/run/runner/workers.py", "_LOADED"):
        "results this process read from the authenticated result cache, by cache directory and key: a key is "
        "everything a result depends on and no entry is rewritten under it, so a hit is that entry (history reads "
        "each unchanged file's result once for all its points); bounded by MAX_LOADED",
    ("auditor/util/textmemo.py", "_kept"):
        "values derived from a file's text by a pure function, keyed by what is derived and the text's digest: "
        "a key's value never changes, so nothing of one run reaches another (history derives them once for all its "
        "points); bounded by MAX_ENTRIES",
    ("auditor/parse/python.py", "_CHILD_FIELDS"):
        "a memo of a pure function of Python's own ast node classes (their _fields): its input never changes",
}

# (module, function): why its memo cannot go stale or carry one run's facts into another.
PURE_MEMOS = {
    ("auditor/match/hipify/apitable.py", "shipped_table"): "no argument: the API table shipped in the package",
    ("auditor/match/rulebook/__init__.py", "shipped_rulebook"):
        "no argument: the rule files shipped in the package (values compiled from them are their own text's)",
    ("auditor/run/runner/cache.py", "tool_digest"): "no argument: rocm-audit's own code and rule files",
    ("auditor/run/runner/cachetrust/key.py", "cache_secret"): "no argument: the user's key, made or read once per process",
    ("auditor/util/datacodec.py", "decoder"): "a Python type",
    ("auditor/util/datacodec.py", "_hints"): "a Python type",
    ("auditor/judge/analysis/effort.py", "load_model"): "no argument: the shipped effort model",
    ("auditor/model/rocmpath/deps.py", "_install_requires"): "a setup.py's text (str); the answer is a tuple of str",
    ("auditor/match/engines/dependency.py", "_name_pattern"): "a name pattern (str)",
    ("auditor/match/engines/hipify.py", "_ordered"): "a tuple of frozen rules",
    ("auditor/match/engines/hipify.py", "_speaking"): "a tuple of frozen rules",
    ("auditor/match/engines/python/names.py", "_name_regex"): "name patterns (a tuple of str)",
    ("auditor/match/engines/python/names.py", "_last_names"): "name patterns (a tuple of str)",
    ("auditor/match/engines/python/names.py", "compiled_regex"): "a regex (str)",
    ("auditor/match/engines/text.py", "_compiled"): "a regex (str)",
    ("auditor/fix/data.py", "shipped_fixes"): "no argument: the fixes' data shipped in the package",
    ("auditor/fix/text_fixes.py", "rocm_images"): "no argument: the table of ROCm images shipped in the package",
    ("auditor/parse/cuda.py", "compile_query"): "a query's text (str)",
    ("auditor/parse/cuda.py", "call_regex"): "a query's text (str)",
    ("auditor/truth/python.py", "shipped_persona"): "no argument: the shipped guards.toml's [python] and [persona]",
    ("auditor/truth/switches.py", "shipped"): "no argument: the shipped guards.toml's build-reader switches, frozen",
    ("auditor/match/rulebook/prefilter.py", "_spec_needles"): "a frozen rule spec",
    ("auditor/match/rulebook/prefilter.py", "query_needles"): "a query's text (str)",
    ("auditor/match/rulebook/prefilter.py", "_needle_index"): "a tuple of frozen rules (the index is not changed after it is made)",
    ("auditor/match/rulebook/prefilter.py", "_query_index"): "a tuple of query texts (the automaton is not changed once made)",
    ("auditor/report/html.py", "_lexer"): "a file name (str)",
    ("auditor/model/rocmpath/cmakebuild.py", "_last_part"): "a target name (str)",
    ("auditor/model/rocmpath/provenance.py", "_remembered_includes"):
        "a text (str), frozen configurations and frozen preprocessor facts; returns tuples and frozensets",
    ("auditor/model/rocmpath/pybuild.py", "_read_remembered"):
        "a path and a text (str); its caller returns a deep copy of the PyBuild, never the one remembered",
    ("auditor/util/purepaths.py", "pure"): "a path (str); the PurePosixPath is immutable",
    ("auditor/judge/table.py", "_first_match"): "a frozenset of fact names; the table is a constant of frozen rows",
    ("auditor/judge/analysis/effort.py", "_in_optional_dir"): "a path (str), a frozenset of names and a path (str)",
    ("auditor/model/rocmpath/reader.py", "_owner"): "a path (str) and a tuple of component directories (str)",
    ("auditor/util/vcs.py", "_neutral_config"): "no argument: git's own list of config keys that run programs",
}


def _called(node: ast.expr) -> str | None:
    func = node.func if isinstance(node, ast.Call) else None
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def _targets(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        out = []
        for target in node.targets:
            out.extend(target.elts if isinstance(target, ast.Tuple) else [target])
        return out
    if isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        return [node.target]
    if isinstance(node, ast.Delete):
        return list(node.targets)
    return []


def module_state(relative: str, source: str) -> list[tuple[str, str]]:
    """(name, what) for every piece of module-level mutable state in one module's source."""
    tree = syntax_tree(source)
    containers: set[str] = set()
    for node in tree.body:
        value = getattr(node, "value", None)
        mutable = isinstance(value, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)) or (
            isinstance(value, ast.Call) and _called(value) in CONTAINERS)
        if mutable:
            containers.update(t.id for t in _targets(node) if isinstance(t, ast.Name))
    classes = {node.name for node in tree.body if isinstance(node, ast.ClassDef)}
    found: list[tuple[str, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            found.extend((name, "a `global` statement") for name in node.names)
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) \
                    and func.value.id in containers and func.attr in MUTATORS:
                found.append((func.value.id, f"changed by .{func.attr}() on line {node.lineno}"))
            if _called(node) == "next" and node.args and isinstance(node.args[0], ast.Name) \
                    and node.args[0].id in containers:
                found.append((node.args[0].id, f"advanced on line {node.lineno}"))
        for target in _targets(node):
            if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) \
                    and target.value.id in containers:
                found.append((target.value.id, f"item set on line {target.lineno}"))
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                    and (target.value.id in classes or target.value.id == "cls"):
                owner = target.value.id if target.value.id != "cls" else _enclosing_class(tree, target)
                found.append((owner, f"class attribute {target.attr} set on line {target.lineno}"))
    return sorted(set(found))


def _enclosing_class(tree: ast.Module, inner: ast.AST) -> str:
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and any(child is inner for child in ast.walk(node)):
            return node.name
    return "cls"


def memoised(source: str) -> list[str]:
    """Functions of the module under functools.cache or lru_cache."""
    out = []
    for node in ast.walk(syntax_tree(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for decorator in node.decorator_list:
                text = ast.unparse(decorator)
                if text.split("(")[0].split(".")[-1] in ("cache", "lru_cache"):
                    out.append(node.name)
    return out


def _modules() -> dict[str, str]:
    return {path.relative_to(REPO).as_posix(): path.read_text(encoding="utf-8")
            for path in sorted(AUDITOR.rglob("*.py"))}


@pytest.mark.slow
def test_no_module_level_mutable_state_outside_the_listed_process_state():
    found = {(relative, name): what for relative, source in _modules().items()
             for name, what in module_state(relative, source)}
    unlisted = {key: what for key, what in found.items() if key not in PROCESS_STATE}
    assert not unlisted, "module-level state: hold it in the run's context instead\n" + "\n".join(
        f"{relative}: {name}: {what}" for (relative, name), what in sorted(unlisted.items()))
    stale = set(PROCESS_STATE) - set(found)
    assert not stale, f"listed as process state but no longer found: {sorted(stale)}"


@pytest.mark.slow
def test_every_memoised_function_is_listed_as_a_pure_function_of_immutable_input():
    found = {(relative, name) for relative, source in _modules().items() for name in memoised(source)}
    assert found - set(PURE_MEMOS) == set(), "memoised: argue why its input is immutable, in PURE_MEMOS"
    assert set(PURE_MEMOS) - found == set(), "listed in PURE_MEMOS but no longer memoised"


def test_the_reader_sees_each_kind_of_module_state():
    """The checker itself: each shape it must catch, and shapes that are not state."""
    source = '''
import itertools
_CACHE = {}
_SEEN: set[str] = set()
_SERIAL = itertools.count()
CONSTANT = {"a": 1}
_LIST = []


class Worker:
    context = None

    @classmethod
    def arm(cls):
        cls.deadline = 1


def init(value):
    global _COUNT
    Worker.context, Worker.other = value, value
    _CACHE[value] = 1
    _SEEN.add(value)
    del _LIST[0]
    return next(_SERIAL), CONSTANT.get(value)
'''
    assert {name for name, _ in module_state("x.py", source)} == {"_COUNT", "Worker", "_CACHE", "_SEEN", "_SERIAL",
                                                                  "_LIST"}
    assert memoised("import functools\n@functools.lru_cache(maxsize=2)\ndef f(x): return x\n"
                    "@cache\ndef g(): return 1\n") == ["f", "g"]
