"""CPU seconds of each stage of one cold `check TREE --no-cache -j 1`, every file scanned in this process.

    .venv/bin/python scripts/stagecpu.py TREE      # prints one JSON object: stage -> CPU seconds

Stages are counted exclusively (a parse inside the scan is parse, not match): discovery, build model (the build
and macro pre-passes), parse (each tree-sitter and Python parse, recovery rounds included), match (the rest of
the scan), judge (the report built from the results: reach model, dispositions, link, verdicts), report
(rendering and writing it), other (start-up, imports, the rulebook, what lies between). The stages are found by
wrapping the functions that run them (in this layout or the one before the stage folders, to compare
installations); one missing after a refactor counts as other.
"""
from __future__ import annotations

import functools
import importlib
import json
import resource
import sys
import time
from collections import Counter
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

# pipeline.context's `timed(timings, name)` stages, by the benchmark's stage names
TIMED = {"discover": "discovery", "build pre-pass": "build model", "macro pre-pass": "build model",
         "scan": "match", "report": "judge"}
# (stage, candidate modules, attribute): the function as its caller looks it up (a module attribute there)
WRAPPED = (
    ("parse", ("auditor.parse.cuda", "auditor.parsing.cuda"), "parse"),
    ("parse", ("auditor.match.inputs.code", "auditor.inputs.code"), "parse"),
    ("report", ("auditor.cli.app",), "emit"),
)


class Clock:
    """Exclusive CPU time per stage: entering a stage charges the time so far to the stage it interrupts."""

    def __init__(self) -> None:
        self.totals: Counter[str] = Counter()
        self.stack: list[str] = []
        self.mark = time.process_time()

    def _charge(self) -> None:
        now = time.process_time()
        if self.stack:
            self.totals[self.stack[-1]] += now - self.mark
        self.mark = now

    @contextmanager
    def stage(self, name: str):
        self._charge()
        self.stack.append(name)
        try:
            yield
        finally:
            self._charge()
            self.stack.pop()

    def wrap(self, name: str, function: Callable) -> Callable:
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            with self.stage(name):
                return function(*args, **kwargs)
        return wrapper


def _module(candidates: tuple[str, ...]):
    for name in candidates:
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    return None


def instrument(clock: Clock) -> None:
    for stage, candidates, attribute in WRAPPED:
        module = _module(candidates)
        if module is not None and hasattr(module, attribute):
            setattr(module, attribute, clock.wrap(stage, getattr(module, attribute)))
    context = _module(("auditor.run.pipeline.context", "auditor.pipeline.context"))
    if context is not None and hasattr(context, "timed"):
        original = context.timed

        @contextmanager
        def timed(timings, stage):
            with original(timings, stage), clock.stage(TIMED.get(stage, "other")):
                yield
        context.timed = timed
    for candidates in (("auditor.run.runner.workers", "auditor.runner.workers"),
                       ("auditor.run.runner.isolate", "auditor.runner.isolate")):
        module = _module(candidates)
        if module is not None and hasattr(module, "fork_available"):   # every file scanned here, counted
            module.fork_available = lambda: False


def main(argv: list[str]) -> int:
    from auditor.cli.app import main as rocm_audit

    clock = Clock()
    instrument(clock)
    tree = Path(argv[0])
    with clock.stage("other"):
        rocm_audit(["check", str(tree), "--format", "json", "--no-cache", "--no-progress", "-j", "1",
                    "-o", "/dev/null"])
    usage = resource.getrusage(resource.RUSAGE_SELF)   # the whole process: imports before the clock are other
    clock.totals["other"] = usage.ru_utime + usage.ru_stime - sum(
        seconds for stage, seconds in clock.totals.items() if stage != "other")
    print(json.dumps({stage: round(seconds, 3) for stage, seconds in clock.totals.items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
