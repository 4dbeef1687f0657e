"""The decision view: the migration plan's order and counts, one row per component, and the ROCm-path data
(dispositions, a component's rocm_path) read when the analysis provides it."""

import pytest

from auditor.run.pipeline import audit
from auditor.report import plan
from auditor.match.rulebook import load_rulebook
from auditor.model.rocmpath.model import Evidence, RocmPath
from auditor.types import Component, Severity
from tests.conftest import FIXTURES, write_tree


@pytest.fixture(scope="module")
def llm_serving():
    return audit([FIXTURES / "llm_serving"], load_rulebook(), shown_root="llm_serving")


def test_plan_puts_blocking_work_first_then_effort(llm_serving):
    p = plan.plan(llm_serving)
    assert p.items[0].rule_id == "RA100" and p.items[0].blocking and p.items[0].title == "Replace tensorrt_llm"
    trt = [f for f in llm_serving.findings if f.rule_id == "RA100" and plan.disposition(llm_serving, f) == "live"]
    assert p.items[0].sites == len(trt) and p.items[0].files == len({f.path for f in trt})
    rest = [w.high_days for w in p.items if not w.blocking]
    assert rest == sorted(rest, reverse=True)
    live_rules = {f.rule_id for f in llm_serving.findings
                  if plan.disposition(llm_serving, f) == "live" and f.severity > Severity.INFO}
    assert len(p.items) + p.more == len(live_rules)
    # the plan, review and validation add up to the effort range the report states
    total = sum(w.high_days for w in p.items) + p.more_high_days + p.review_days[1] + p.validation_days[1]
    assert total == pytest.approx(llm_serving.effort.high_days, abs=0.3)


def test_components_one_row_each_with_their_own_work(tmp_path):
    write_tree(tmp_path, {
        "setup.py": "from setuptools import setup\nsetup(name='main')\n",
        "main/gpu.py": "import pynvml\npynvml.nvmlInit()\n",
        "plugin/setup.py": "from setuptools import setup\nsetup(name='plugin')\n",
        "plugin/p.py": "import tensorrt_llm\n",
    })
    report = audit([tmp_path], load_rulebook(), shown_root="repo")
    rows = {r.path: r for r in plan.components(report)}
    assert set(rows) == {plan.ROOT_LABEL, "plugin"}
    # the plugin blocks only itself: its row counts the finding its verdict weighed (never "blocked" beside 0),
    # while the tree's would-break count leaves it out (optional to the tree)
    assert rows["plugin"].findings == 1 and rows["plugin"].verdict == "blocked"
    assert not any(report.breaks(f) for f in report.findings if f.path.startswith("plugin/"))
    assert rows[plan.ROOT_LABEL].findings == sum(
        1 for f in report.findings if f.path.startswith("main/") and not f.guarded and f.severity > Severity.INFO)
    assert rows["plugin"].high_days == 0          # optional: blocks only itself and costs nothing


def test_rocm_path_and_disposition_are_read_from_the_analysis(llm_serving):
    found = RocmPath(".", evidence=(Evidence("P1", "setup.py:42", "switches to ROCm"),
                                    Evidence("P4", "setup.py:459", "builds the same module from CK")),
                     verified=True, recipe="pip install --no-build-isolation .", confidence="medium")
    component = Component(".", "ready", True, "ready: ROCm build", False, rocm_path=found)
    pattern, evidence, install, confidence = plan._rocm_path(component)
    assert pattern == ("P1 build-level backend switch; P4 alternative implementation of the same artifact")
    assert evidence == ("setup.py:42", "setup.py:459")
    assert install.startswith("pip install") and confidence == "medium"
    assert plan._rocm_path(Component(".", "blocked", False, "", False))[0] == "none found"
    by_path = {f.path: plan.disposition(llm_serving, f) for f in llm_serving.findings}
    assert by_path["Dockerfile"] == "ops"                     # containers are ops, never the package
    assert by_path["llmserve/engine.py"] == "live"            # TensorRT-LLM in shipped code


@pytest.mark.parametrize(("path", "hidden"), [
    ("tests/test_a.py", True), ("pkg/test_a.py", True), ("examples/x/run.py", True),
    (".github/workflows/ci.yml", True), ("benchmarks/b.cu", True), ("pkg/kernels/a.cu", False),
    ("pkg/testing_utils.py", False), ("Dockerfile", False),
])
def test_tests_examples_and_ci_are_peripheral(path, hidden):
    assert plan.peripheral(path) is hidden
