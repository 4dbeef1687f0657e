"""No dead definitions in auditor/ or scripts/: vulture finds no function, method, class, property or import that
nothing in the code, the scripts or the tests uses. Variables and attributes are left out: the HTML templates read
the view's fields by name, which vulture cannot see."""
import pytest
import re
import subprocess
import sys

from tests.conftest import REPO

pytestmark = pytest.mark.slow   # vulture over the code and the tests

# Called by name from outside Python code vulture reads: libcst's visitor protocol, mkdocs' hook protocol, and
# a property only the Jinja2 template reads.
CALLED_BY_FRAMEWORKS = ("visit_*", "leave_*", "on_files", "not_breaking_text")
DEFINITIONS = re.compile(r"^(auditor|scripts)/.*: unused (function|method|class|property|import) ", re.M)


def test_nothing_defined_in_the_code_is_unused():
    done = subprocess.run(
        [sys.executable, "-m", "vulture", "auditor", "scripts", "tests", "--min-confidence", "60",
         "--exclude", "auditor/example,fixtures", "--ignore-names", ",".join(CALLED_BY_FRAMEWORKS)],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode in (0, 3), done.stderr   # 3: vulture found something (listed below)
    assert not DEFINITIONS.findall(done.stdout), "\n".join(
        line for line in done.stdout.splitlines() if DEFINITIONS.match(line))
