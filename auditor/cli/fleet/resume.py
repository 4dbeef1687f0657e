"""Resume (with --db): which kept report a repository may reuse instead of being scanned again.

A report kept under `--out/reports/NAME.json` is reused only when the current run would produce it: the same
commit, the same rules digest (rocm-audit's code, the rules in force, the options that change results:
history.command.rules_digest) and a clean working tree. The driver knows which report is kept and what made it
from a stamp written beside it (`--out/resume/NAME.json`: repository key, commit, digest, and the report's
SHA-256, so a report rewritten since is never taken for the stamped one); the history store must hold that run,
with the kept report's verdict (a report and stamp rewritten together are not taken for it either).
That commit and digest travel in the task value, and the task decides where the scan would run (a Dask worker
may be another machine): for a local repository, in the process that would start the scan (no process is
started for it), its HEAD, the digest its settings give and a clean working tree; for a URL, in the scan's
process after the shallow fetch, the fetched commit and the digest of its configuration at that commit. Its
`unchanged` outcome comes back without a report, and the driver adds the kept one."""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace
from pathlib import Path

from auditor.cli.fleet.portfolio import VERDICTS
from auditor.cli.fleet.recorder import Recorder
from auditor.cli.fleet.sources import UNSCANNED, Source
from auditor.cli.fleet.tasks import SCANNED, UNCHANGED, Outcome

STAMPS = "resume"
MAX_STAMP_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class Kept:
    """A report kept from an earlier run, and what that run scanned."""

    repo_key: str
    commit: str
    rules_digest: str
    report: dict


def kept_reports(sources: tuple[Source, ...], recorder: Recorder | None, out: Path) -> dict[str, Kept]:
    """The kept reports the store has the run of, by repository name (none without a recorder)."""
    if recorder is None:
        return {}
    found: dict[str, Kept] = {}
    for source in sources:
        kept = _kept(source, out)
        # the stamp's hash is anybody's to recompute: the store's own run must give the kept report's verdict
        if kept is not None and recorder.recorded(kept.repo_key, kept.commit, kept.rules_digest) \
                == kept.report["summary"]["verdict"]:
            found[source.name] = kept
    return found


def _kept(source: Source, out: Path) -> Kept | None:
    if source.kind in UNSCANNED:
        return None
    try:
        stamp_path = out / STAMPS / f"{source.name}.json"
        if stamp_path.stat().st_size > MAX_STAMP_BYTES:
            return None
        stamp = json.loads(stamp_path.read_text(encoding="utf-8"))
        text = (out / "reports" / f"{source.name}.json").read_bytes()
    except (OSError, ValueError):
        return None
    if not isinstance(stamp, dict) or stamp.get("source") != source.location or \
            stamp.get("report_sha256") != hashlib.sha256(text).hexdigest():
        return None
    try:
        report = json.loads(text.decode("utf-8"))
        fields = (stamp["repo_key"], stamp["commit"], stamp["rules_digest"])
    except (ValueError, KeyError):
        return None
    if not all(isinstance(f, str) and f for f in fields) or not isinstance(report, dict) or \
            not isinstance(report.get("summary"), dict) or report["summary"].get("verdict") not in VERDICTS:
        return None
    return Kept(*fields, report)


def with_kept(outcome: Outcome, kept: dict[str, Kept]) -> Outcome:
    """An `unchanged` outcome with the kept report it stands for."""
    if outcome.status != UNCHANGED or outcome.name not in kept:
        return outcome
    return replace(outcome, report=kept[outcome.name].report)


def stamp(outcome: Outcome, out: Path, report_text: str) -> None:
    """After reports/NAME.json was written: the stamp that lets a later run reuse it, when it may (a complete
    scan of a commit's clean tree, with its run for the store), else none (a stale stamp is removed). A run with
    a file it could not scan is not reused: the cause may pass (a time budget under load, a worker killed)."""
    from auditor.run.invocation.output import write_atomic

    where = out / STAMPS / f"{outcome.name}.json"
    run = outcome.record or {}
    if outcome.status != SCANNED or outcome.dirty or not outcome.commit or not run.get("rules_digest") or \
            run.get("complete") is not True:
        where.unlink(missing_ok=True)
        return
    where.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(where, json.dumps({
        "source": outcome.source, "repo_key": outcome.repo_key, "commit": outcome.commit,
        "rules_digest": run["rules_digest"],
        "report_sha256": hashlib.sha256(report_text.encode("utf-8")).hexdigest()}, indent=2) + "\n")
