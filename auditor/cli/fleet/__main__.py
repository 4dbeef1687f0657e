"""`python -m auditor.cli.fleet`: one repository's audit in a process of its own (auditor/cli/fleet/tasks.py starts
it): a RepoTask as JSON on standard input, its Outcome as JSON on standard output."""
from __future__ import annotations

import json
import sys

from auditor.cli.fleet.tasks import audit_repository, task_from_json


def main() -> int:
    task = task_from_json(sys.stdin.buffer.read().decode("utf-8"))
    answer = sys.stdout
    sys.stdout = sys.stderr   # nothing the audit prints can corrupt the answer
    outcome = audit_repository(task)
    answer.write(json.dumps(outcome.as_dict(), ensure_ascii=False))
    answer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
