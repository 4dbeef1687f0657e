"""`rocm-audit fleet SOURCES…`: every repository audited as `check` would, the reports kept under --out, and
the portfolio printed and written. Exit 0; 1 when a repository's verdict reaches --fail-on; 2 when nothing
could be scanned (or on a usage or tool error)."""
from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from auditor.util.errors import ToolError, safe_text
from auditor.cli.fleet.portfolio import Portfolio, build_portfolio, reached
from auditor.cli.fleet.recorder import Recorder, open_recorder
from auditor.cli.fleet.resume import kept_reports, stamp, with_kept
from auditor.cli.fleet.clones import CLONES, refuse_cache_in_checkout
from auditor.cli.fleet.sources import Source, SourceError, expand
from auditor.cli.fleet.tasks import FAILED, SCANNED, UNCHANGED, Outcome, RepoTask

EXIT_CLEAN, EXIT_REACHED, EXIT_ERROR = 0, 1, 2
DEFAULT_OUT = "rocm-audit-fleet"
DEFAULT_TIMEOUT = 1800.0   # seconds a repository may take, fetch included
FAIL_ON = ("blocked", "needs-port", "never")


def build_parser() -> argparse.ArgumentParser:
    from auditor.cli.parser import CommandParser, positive_int, seconds
    from auditor.cli.settings import default_jobs

    parser = CommandParser(prog="rocm-audit fleet", allow_abbrev=False,
                     description="Audit many repositories (as `rocm-audit check` would each) and write the "
                                 "portfolio: verdicts, effort, and what blocks the most work across them.",
                     epilog="Exit codes: 0 done, 1 a repository's verdict reaches --fail-on, 2 nothing could be "
                            "scanned, or a usage or tool error.")
    parser.add_argument("sources", nargs="+", metavar="SOURCE",
                        help="a repository path, a directory of repositories, a git URL, or a file listing paths "
                             "and URLs (one a line, # comments)")
    parser.add_argument("--out", type=Path, default=Path(DEFAULT_OUT), metavar="DIR",
                        help=f"write reports/NAME.json, portfolio.json and portfolio.html here (default {DEFAULT_OUT})")
    parser.add_argument("--format", choices=("terminal", "json", "html"), default="terminal",
                        help="what to print on standard output (default terminal)")
    parser.add_argument("-j", "--jobs", type=positive_int, default=default_jobs(),
                        help="repositories scanned at once by the local executor (default: the number of cores)")
    parser.add_argument("--executor", choices=("local", "dask"), default="local",
                        help="local: processes on this machine; dask: an existing Dask cluster (--scheduler)")
    parser.add_argument("--scheduler", metavar="ADDRESS", help="the Dask scheduler, such as tls://10.0.0.5:8786")
    parser.add_argument("--connect-timeout", type=seconds, default=30.0, metavar="SECONDS",
                        help="give up reaching the Dask scheduler after this long (default 30)")
    dask = parser.add_argument_group("the Dask scheduler's TLS (Dask's distributed.comm.tls config fills in "
                                     "what is not given)")
    dask.add_argument("--tls-ca-file", type=Path, metavar="PEM", help="the CA that signed the cluster's certificates")
    dask.add_argument("--tls-cert", type=Path, metavar="PEM", help="this client's certificate")
    dask.add_argument("--tls-key", type=Path, metavar="PEM", help="this client's private key")
    dask.add_argument("--insecure-scheduler", action="store_true",
                      help="allow a plain tcp:// scheduler off this machine (whoever answers there runs code here)")
    parser.add_argument("--timeout", type=seconds, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                        help="end a repository's scan (fetch included) after this long: a failed row "
                             f"(default {DEFAULT_TIMEOUT:g})")
    parser.add_argument("--fail-on", choices=FAIL_ON, default="never",
                        help="exit 1 when any repository is blocked (blocked), or needs a port or is blocked "
                             "(needs-port); default never: the portfolio is a report")
    parser.add_argument("--db", type=Path, metavar="PATH",
                        help="record each run in this history store; a repository whose commit, rules and "
                             "options are those of its kept report is not scanned again")
    parser.add_argument("-q", "--quiet", action="store_true", help="no line per repository on standard error")
    check = parser.add_argument_group("passed to each repository's check")
    check.add_argument("--no-cache", action="store_true", help="neither read nor write cached scan results")
    check.add_argument("--cache-dir", type=Path, metavar="DIR", help="cache scan results (and git fetches) here")
    check.add_argument("--time-budget", type=seconds, metavar="SECONDS", help="per file (default 60)")
    check.add_argument("--exclude", action="append", default=[], help="gitignore-style pattern to skip (repeatable)")
    check.add_argument("--include-vendored", action="store_true", help="also scan vendored code")
    return parser


def fleet_command(argv: Sequence[str], recorder: Recorder | None = None) -> int:
    """`recorder`: where runs are recorded and resumed from, when not named with --db."""
    from auditor.cli.settings import UsageError

    args = build_parser().parse_args(list(argv))
    if args.executor == "dask" and not args.scheduler:
        raise UsageError("--executor dask needs --scheduler ADDRESS (the scheduler of your Dask cluster)")
    dask_only = (args.scheduler, args.tls_ca_file, args.tls_cert, args.tls_key, args.insecure_scheduler)
    if any(dask_only) and args.executor != "dask":
        raise UsageError("--scheduler, --tls-* and --insecure-scheduler go with --executor dask")
    recorder = open_recorder(args.db) if args.db else recorder
    try:
        sources = expand(args.sources)
    except SourceError as err:
        raise ToolError(str(err)) from None
    clone_dir = str(_clone_dir(args, sources))
    kept = kept_reports(sources, recorder, args.out)
    tasks = [RepoTask(s.name, s.location, s.kind, args.timeout, _check_args(args), clone_dir,
                      *((kept[s.name].commit, kept[s.name].rules_digest) if s.name in kept else ()))
             for s in sources]
    progress = _Progress(len(tasks), args.quiet)

    def settled(outcome: Outcome) -> None:
        progress(with_kept(outcome, kept))

    if args.executor == "dask":
        from auditor.cli.fleet.executors import run_dask

        from auditor.cli.fleet.dasksecurity import SchedulerSecurity

        security = SchedulerSecurity(args.tls_ca_file, args.tls_cert, args.tls_key, args.insecure_scheduler)
        done = run_dask(tasks, args.scheduler, settled, args.connect_timeout, security)
    else:
        from auditor.cli.fleet.executors import run_local

        done = run_local(tasks, args.jobs, settled)
    outcomes = [with_kept(outcome, kept) for outcome in done]
    if recorder is not None:
        for outcome in outcomes:
            if outcome.status == SCANNED and outcome.report is not None:
                commit = None if outcome.dirty else outcome.commit   # a changed working tree is no commit's
                recorder.record(outcome.report, outcome.repo_key, commit, outcome.record)
    trend = getattr(recorder, "trend", None)   # the history store's; a recorder may keep no history
    trends = {o.name: trend(o.repo_key) for o in outcomes if trend and o.repo_key and o.status != FAILED}
    portfolio = write_outputs(outcomes, args.out, trends)
    _print(portfolio, args.format)
    if not any(o.status != FAILED for o in outcomes):
        print(f"rocm-audit: error: none of the {len(outcomes)} repositories could be scanned", file=sys.stderr)
        return EXIT_ERROR
    return EXIT_REACHED if reached(portfolio, None if args.fail_on == "never" else args.fail_on) else EXIT_CLEAN


def write_outputs(outcomes: Sequence[Outcome], out: Path,
                  trends: dict[str, tuple[tuple[str, int], ...]] | None = None) -> Portfolio:
    """reports/NAME.json and reports/NAME.html for each repository scanned, then portfolio.json and
    portfolio.html (which links each repository's page)."""
    import json

    from auditor.cli.fleet.html import render_html
    from auditor.cli.fleet.text import render_json
    from auditor.run.invocation.output import write_atomic

    (out / "reports").mkdir(parents=True, exist_ok=True)
    paths: dict[str, str] = {}
    pages: dict[str, str] = {}
    for outcome in outcomes:
        if outcome.report is not None and outcome.status != FAILED:
            relative = f"reports/{outcome.name}.json"
            page = f"reports/{outcome.name}.html"
            if outcome.status != UNCHANGED:
                text = json.dumps(outcome.report, indent=2, ensure_ascii=False) + "\n"
                write_atomic(out / relative, text)
                if outcome.page is not None:
                    write_atomic(out / page, outcome.page)
                stamp(outcome, out, text)
            paths[outcome.name] = relative
            if (out / page).is_file():   # an unchanged repository keeps the page its report was written with
                pages[outcome.name] = page
    portfolio = build_portfolio(outcomes, paths, trends, pages)
    write_atomic(out / "portfolio.json", render_json(portfolio))
    write_atomic(out / "portfolio.html", render_html(portfolio))
    return portfolio


def _print(portfolio: Portfolio, form: str) -> None:
    from auditor.cli.fleet.html import render_html
    from auditor.cli.fleet.text import render_json, render_terminal

    render = {"terminal": render_terminal, "json": render_json, "html": render_html}[form]
    sys.stdout.write(render(portfolio))


def _check_args(args: argparse.Namespace) -> tuple[str, ...]:
    out: list[str] = ["--no-cache"] if args.no_cache else []
    if args.cache_dir:
        out += ["--cache-dir", str(args.cache_dir.absolute())]
    if args.time_budget:
        out += ["--time-budget", str(args.time_budget)]
    for pattern in args.exclude:
        out += [f"--exclude={pattern}"]
    return (*out, "--include-vendored") if args.include_vendored else tuple(out)


def _clone_dir(args: argparse.Namespace, sources: Sequence[Source]) -> Path:
    """`<cache>/fleet-clones`, the cache being the one every repository's check uses; refused (exit 2) inside a
    git checkout."""
    from auditor.run.runner.cache import default_directory
    from auditor.cli.parser import CACHE_ENV

    base = args.cache_dir or (Path(os.environ[CACHE_ENV]) if os.environ.get(CACHE_ENV) else default_directory())
    refuse_cache_in_checkout(base, [Path(s.location) for s in sources if s.kind == "path"])
    return base.absolute() / CLONES


class _Progress:
    """A line per repository on standard error as each finishes: `[3/12] vllm: blocked (41.2 s)`."""

    def __init__(self, total: int, quiet: bool):
        self.total, self.quiet, self.count = total, quiet, 0

    def __call__(self, outcome: Outcome) -> None:
        self.count += 1
        if self.quiet:
            return
        verdict = (outcome.report or {}).get("summary", {}).get("verdict") if outcome.status != FAILED else None
        note = " (unchanged)" if outcome.status == UNCHANGED else \
            " (working tree changed since its commit)" if outcome.dirty else ""
        what = f"{verdict}{note}" if verdict else f"failed: {outcome.reason}"
        print(safe_text(f"[{self.count}/{self.total}] {outcome.name}: {what} ({outcome.seconds:g} s)"),
              file=sys.stderr, flush=True)
