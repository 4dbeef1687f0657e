"""Tree-sitter queries are compiled lazily and only for files that contain the text they need: the
needles derived from a query must never skip a file the query matches."""
import pytest

from auditor.run.discover.files import classify
from auditor.match.engines import cuda as cuda_engine
from auditor.match.rulebook.prefilter import query_may_match, query_needles, regex_needles
from auditor.match.rulebook import RuleError, load_rulebook
from auditor.run.scan.file import scan_text_as
from tests.conftest import FIXTURES

RULEBOOK = load_rulebook()
QUERY_RULES = [r for r in RULEBOOK.family("cuda") if r.spec.query is not None]


def _cuda_sources():
    for rule in RULEBOOK.family("cuda"):
        for i, example in enumerate(rule.flag + rule.ok):
            yield pytest.param(example.file, example.code, id=f"{rule.id}-{i}")
    for path in sorted(FIXTURES.rglob("*")):
        if path.suffix in (".cu", ".cuh", ".cpp", ".h"):
            yield pytest.param(path.name, path.read_text(encoding="utf-8"), id=path.relative_to(FIXTURES).as_posix())


@pytest.mark.slow
@pytest.mark.parametrize(("name", "code"), list(_cuda_sources()))
def test_skipping_queries_never_changes_the_findings(name, code, monkeypatch):
    def found() -> set:
        # (the column is left out: which of two same-line hits of one rule is kept is not stable today)
        return {(f.rule_id, f.span.line, f.subject, f.guarded, f.severity)
                for f in scan_text_as(name, classify(name), code, RULEBOOK).findings}

    with_prefilter = found()
    monkeypatch.setattr(cuda_engine, "active_queries", lambda queries, text: frozenset(queries))
    assert found() == with_prefilter


def test_most_queries_are_skipped_for_plain_cuda():
    plain = "__global__ void scale(float* x, float a, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n" \
            "  if (i < n) x[i] *= a;\n}\n"
    run = [r.id for r in QUERY_RULES if query_may_match(r.spec.query, plain.lower())]
    assert len(run) <= len(QUERY_RULES) // 4, run


@pytest.mark.parametrize(("query", "needed"), [
    ('(call_expression function: (_) @f (#match? @f "^(::)?cudnn[A-Z]"))', [{"cudnn"}]),
    ('((identifier) @x (#eq? @x "__managed__"))', [{"__managed__"}]),
    ('(function_definition ["__global__" "__device__"] body: (_ (kernel_call_syntax)))',
     [{"__global__", "__device__"}, {"<<<"}]),
    ('(call_expression (identifier) @f (#match? @f "^cu(Init|Mem[A-Z])"))', [{"cuinit", "cumem"}]),
    ('(binary_expression operator: "%" right: (_)? @r (#eq? @r "32"))', [{"%"}]),   # optional capture: no needle
    ('((x) @a (#any-of? @a "foo" "bar"))\n((y) @b (#eq? @b "baz"))', [{"foo", "bar", "baz"}]),
    ("(identifier) @id", []),
])
def test_query_needles(query, needed):
    assert [set(c) for c in query_needles(query)] == needed


def test_regex_needles_follow_prefixes_and_lookaheads():
    assert regex_needles(r"lib(cuda|nccl)[.]so") == {"libcuda.so", "libnccl.so"}
    assert regex_needles(r"\A(?=[\s\S]*\basm\b)[\s\S]*") == {"asm"}
    assert regex_needles(r"a|b") is None


@pytest.mark.slow
def test_queries_compile_when_checked(tmp_path):
    assert load_rulebook(check_queries=True).rules
    from auditor.match.rulebook import rules_root

    for path in rules_root().rglob("*.toml"):
        target = tmp_path / path.relative_to(rules_root())
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(path.read_text())
    broken = tmp_path / "cuda" / "constructs.toml"
    broken.write_text(broken.read_text().replace("(kernel_call_syntax)", "(no_such_node)", 1))
    assert load_rulebook(tmp_path).rules                 # a scan compiles queries only when it needs them
    with pytest.raises(RuleError, match="query does not compile"):
        load_rulebook(tmp_path, check_queries=True)


def test_needles_prefer_what_every_alternative_shares():
    # every name contains "warp": one needle, not {warp, threads, lanes}
    assert regex_needles(r"(?i)^(warp_?size|threads_?per_?warp|lanes_?per_?warp)$", 1) == {"warp"}
    # a clause another alternative's needles already imply adds nothing: `__shfl_xor_sync` holds `__shfl`
    query = ('((call_expression function: (identifier) @f) @hit (#match? @f "__shfl"))\n'
             '((call_expression function: (identifier) @g) @hit (#match? @g "^__shfl_(xor|down)_sync$"))')
    assert [set(c) for c in query_needles(query)] == [{"__shfl"}]


def _python_sources():
    for rule in RULEBOOK.family("python") + RULEBOOK.family("dependency"):
        for i, example in enumerate(rule.flag + rule.ok):
            if example.file.endswith(".py"):
                yield pytest.param(example.file, example.code, id=f"{rule.id}-{i}")
    for path in sorted(FIXTURES.rglob("*.py")):
        yield pytest.param(path.name, path.read_text(encoding="utf-8"), id=path.relative_to(FIXTURES).as_posix())


@pytest.mark.slow
@pytest.mark.parametrize(("name", "code"), list(_python_sources()))
def test_skipping_python_rules_never_changes_the_findings(name, code, monkeypatch):
    """The needles of a Python rule (all of its clauses) are only ever a shortcut."""
    from auditor.match.rulebook import prefilter
    def found() -> set:
        return {(f.rule_id, f.span.line, f.subject, f.guarded) for f in scan_text_as(name, "python", code, RULEBOOK).findings}

    with_prefilter = found()
    monkeypatch.setattr(prefilter.PythonGate, "may_match", lambda self, haystack: True)
    monkeypatch.setattr(prefilter, "rules_present", lambda rules, text: rules)
    from auditor.match.engines.python import engine

    monkeypatch.setattr(engine, "rules_present", lambda rules, text: rules)
    assert found() == with_prefilter


def test_a_string_rule_inside_calls_needs_the_call_not_just_a_substring_of_its_literal():
    """RA510 (`backend="mpi"` in init_process_group): "mpi" inside "compile" or "ucc" inside "success" once sent
    every file through the whole Python rule walk."""
    from auditor.match.rulebook.prefilter import Haystack, rules_present

    ra510 = (RULEBOOK.by_id()["RA510"],)
    assert rules_present(ra510, Haystack('model = torch.compile(model)\nprint("success")\n')) == ()
    assert rules_present(ra510, Haystack('dist.init_process_group(backend="mpi")\n'.lower())) == ra510
    code = 'import torch.distributed as dist\n\ndist.init_process_group(backend="mpi")\n'
    assert [(f.rule_id, f.span.line) for f in scan_text_as("train.py", "python", code, RULEBOOK).findings
            if f.rule_id == "RA510"] == [("RA510", 3)]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "code"), list(_cuda_sources()))
def test_call_regex_rules_find_the_same_hits_as_their_queries(name, code, monkeypatch):
    """Queries of the `((call_expression function: (_) @hit) (#match? @hit "..."))` shape run on the inventory's
    calls instead of through tree-sitter: the findings must be those the queries themselves give."""
    from auditor.parse import cuda as ts_cuda
    from auditor.match.rulebook.context import Guards, ScanContext

    def found() -> set:
        context = ScanContext(RULEBOOK, Guards.of(RULEBOOK.guards))   # its own index, made with call_regex as set
        return {(f.rule_id, f.span.line, f.span.column, f.subject, f.guarded)
                for f in scan_text_as(name, classify(name), code, context).findings}

    fast = found()
    monkeypatch.setattr(ts_cuda, "call_regex", lambda source: None)
    assert found() == fast


def test_most_library_rules_take_the_call_regex_path():
    from auditor.parse.cuda import call_regex

    shaped = [r.id for r in QUERY_RULES if call_regex(r.spec.query) is not None]
    assert "RA430" in shaped and "RA400" in shaped and len(shaped) >= len(QUERY_RULES) // 3
    assert call_regex('((call_expression function: (_) @hit) (#match? @hit "^(::)?cudnn[A-Z]"))') == "^(::)?cudnn[A-Z]"
    assert call_regex("(call_expression function: (identifier) @hit)") is None
