"""Every rule's own examples: `flag` must be reported by that rule, `ok` must not be (guarded hits are fine in `ok`)."""
import pytest

from auditor.match.rulebook import load_rulebook
from auditor.cli.rulepack import example_problem

RULEBOOK = load_rulebook()


# one test per rule, over all its examples: a test per example cost more in the test runner than in the scan
@pytest.mark.parametrize("rule", RULEBOOK.rules, ids=lambda rule: rule.id)
def test_rule_example(rule):
    problems = [f"{kind} example {i}: {problem}\n{example.code}"
                for kind, expect_hit, examples in (("flag", True, rule.flag), ("ok", False, rule.ok))
                for i, example in enumerate(examples)
                if (problem := example_problem(RULEBOOK, rule, example, expect_hit)) is not None]
    assert rule.flag and rule.ok and not problems, f"{rule.id}: " + "\n".join(problems)


@pytest.mark.parametrize("rule", RULEBOOK.rules, ids=lambda rule: rule.id)
def test_every_flag_example_pins_its_line(rule):
    """A `# flag` / `// flag` marker or `line = N` (a one-line example pins itself)."""
    unpinned = [i for i, example in enumerate(rule.flag) if not example.lines]
    assert not unpinned, f"{rule.id}: flag example(s) {unpinned} mark no line"


def test_a_line_inside_a_multi_line_command_reads_the_whole_command_and_one_outside_reads_itself():
    from auditor.match.engines.text import Commands

    code = ["set(A /opt/rocm/hip)", "find_program(H", "  PATHS /opt/rocm", "  /opt/rocm/hip", ")", "message(x)"]
    commands = Commands(code)
    assert commands.around(4) == "find_program(H\n  PATHS /opt/rocm\n  /opt/rocm/hip\n)"
    assert commands.around(1) == "set(A /opt/rocm/hip)"
    assert commands.around(6) == "message(x)"
