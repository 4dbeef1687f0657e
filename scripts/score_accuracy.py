"""Score rocm-audit against a blind set of real projects: verdicts, port sites, portable look-alikes.

    .venv/bin/python scripts/score_accuracy.py --src DIR [--set tests/data/accuracy/blind_set.toml] [--json OUT]

DIR holds one unpacked source tree per project, named as the set names it (`DIR/gsplat`, `DIR/kornia`, …).
The expectations come from the set file, written from reading each project's code before any scan of it.
rocm-audit runs as a user runs it (a subprocess, JSON output, no cache). Per project and in total:

- verdict: the report's overall verdict equals the expected one;
- site recall: a site counts when a finding is reported in its file within ±2 lines (`loose`), and with the
  expected category too (`strict`); a finding the tool itself marks `guarded` (no work) does not count;
- look-alike rate: a look-alike is flagged when a finding at medium or above within ±2 lines of it is work
  the report asks for (disposition `live` or `verify on hardware`).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
NEAR = 2
WORK_DISPOSITIONS = ("live", "verify on hardware")
SEVERE = ("critical", "high", "medium")


@dataclass(frozen=True)
class Score:
    name: str
    expected: str
    verdict: str
    sites: int
    loose: int
    strict: int
    lookalikes: int
    flagged: int
    misses: tuple[str, ...]
    false_flags: tuple[str, ...]
    reason: str


def scan(tree: Path) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report.json"
        run = subprocess.run([sys.executable, "-m", "auditor", "--format", "json", "--no-progress", "--no-cache",
                              "--no-html", "-o", str(out), str(tree)], capture_output=True, text=True)
        if run.returncode not in (0, 1):
            raise SystemExit(f"rocm-audit failed on {tree} (exit {run.returncode}): {run.stderr[-2000:]}")
        return json.loads(out.read_text())


def _near(findings: list[dict], at: str) -> list[dict]:
    path, _, line = at.rpartition(":")
    return [f for f in findings if f["path"] == path and f.get("line") and abs(f["line"] - int(line)) <= NEAR]


def score(project: dict, report: dict) -> Score:
    findings = report["findings"]
    counted = [f for f in findings if not f.get("guarded") and f.get("disposition") != "guarded"]
    loose = strict = 0
    misses = []
    for site in project.get("site", []):
        near = _near(counted, site["at"])
        loose += bool(near)
        strict += any(f["category"] == site["category"] for f in near)
        if not any(f["category"] == site["category"] for f in near):
            got = ", ".join(sorted({f"{f['rule']}/{f['category']}/{f['disposition']}" for f in near})) or "nothing"
            misses.append(f"{site['at']} ({site['category']}): {got}")
    flagged = []
    for look in project.get("lookalike", []):
        bad = [f for f in _near(findings, look["at"])
               if f["severity"] in SEVERE and f.get("disposition") in WORK_DISPOSITIONS and not f.get("guarded")]
        if bad:
            flagged.append(f"{look['at']}: " + ", ".join(sorted({f"{f['rule']} {f['severity']}" for f in bad})))
    summary = report["summary"]
    return Score(project["name"], project["verdict"], summary["verdict"], len(project.get("site", [])), loose,
                 strict, len(project.get("lookalike", [])), len(flagged), tuple(misses), tuple(flagged),
                 summary["verdict_reason"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--src", type=Path, required=True, help="directory with one source tree per project")
    parser.add_argument("--set", type=Path, default=REPO / "tests/data/accuracy/blind_set.toml")
    parser.add_argument("--json", type=Path, help="also write the scores here")
    parser.add_argument("--only", help="comma-separated project names")
    args = parser.parse_args()
    projects = tomllib.loads(args.set.read_text())["project"]
    if args.only:
        projects = [p for p in projects if p["name"] in args.only.split(",")]
    scores = []
    for project in projects:
        tree = args.src / project["name"]
        if not tree.is_dir():
            raise SystemExit(f"missing source tree: {tree}")
        s = score(project, scan(tree))
        scores.append(s)
        mark = "ok " if s.verdict == s.expected else "BAD"
        print(f"{mark} {s.name:28} expected {s.expected:10} got {s.verdict:10} sites {s.strict}/{s.loose}/{s.sites} "
              f"(strict/loose/all) look-alikes flagged {s.flagged}/{s.lookalikes}")
        print(f"      {s.reason[:300]}")
        for m in s.misses:
            print(f"      miss  {m}")
        for m in s.false_flags:
            print(f"      flag  {m}")
    sites = sum(s.sites for s in scores)
    looks = sum(s.lookalikes for s in scores)
    total = {
        "verdict_right": sum(s.verdict == s.expected for s in scores), "projects": len(scores),
        "site_recall_strict": round(sum(s.strict for s in scores) / max(sites, 1), 3),
        "site_recall_loose": round(sum(s.loose for s in scores) / max(sites, 1), 3),
        "lookalike_rate": round(sum(s.flagged for s in scores) / max(looks, 1), 3), "sites": sites,
        "lookalikes": looks,
    }
    print(f"verdict right {total['verdict_right']}/{total['projects']}; site recall {total['site_recall_strict']} "
          f"strict, {total['site_recall_loose']} loose ({sites} sites); look-alikes flagged "
          f"{total['lookalike_rate']} ({looks})")
    if args.json:
        args.json.write_text(json.dumps({"total": total, "projects": [s.__dict__ for s in scores]}, indent=1))


if __name__ == "__main__":
    main()
