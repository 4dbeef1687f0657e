"""Every number a lead reads counts one live set: the JSON summary, the `-q` lines, SARIF and the HTML page (read
in headless Chromium, as a lead reads it) are checked against the findings the JSON report lists and against each
other. `disagreements` is what tests/test_live_counts.py asserts on the fixtures; run this on real trees:

    python -m scripts.check_live_equalities PATH...     (a table, one row a tree; exit 1 on any disagreement)
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from auditor.judge.dispositions import OUTSIDE_MAIN_PATH

SEVERITIES = ("critical", "high", "medium", "low", "info")
FAIL_ON = "high"                       # the default --fail-on these runs keep
VERIFY = "verify on hardware"


@dataclass(frozen=True)
class Outputs:
    code: int
    report: dict
    sarif: dict
    quiet: str
    html: Path


def audit(path: Path, out: Path) -> Outputs:
    """One `check` run writing every report, as a user runs it (a process of its own)."""
    out.mkdir(parents=True, exist_ok=True)
    run = subprocess.run(
        [sys.executable, "-m", "auditor", "check", str(path), "-q", "--no-progress", "--no-html",
         "--json", str(out / "r.json"), "--sarif", str(out / "r.sarif"), "--html", str(out / "r.html")],
        capture_output=True, text=True, check=False)
    return Outputs(run.returncode, json.loads((out / "r.json").read_text()),
                   json.loads((out / "r.sarif").read_text()), run.stdout, out / "r.html")


def _int(text: str) -> int:
    return int(text.replace(",", "").strip() or 0)


def _pairs(text: str) -> dict[str, int]:
    """"optional 12 · guarded 4" into {"optional": 12, "guarded": 4}."""
    return {name.strip(): _int(n) for name, n in re.findall(r"([a-zA-Z][\w -]*?) ([\d,]+)(?: ·|$)", text.strip())}


def page_numbers(page) -> dict:
    """Every count the page states, read from the rendered page."""
    text = page.locator
    cards = {c.locator("h2").text_content().strip(): c for c in text("section.cards .card").all()}
    found = cards["Findings"]
    units = found.locator("p.unit").all_text_contents()
    notes = next((u for u in units if "not on the ROCm path" in u), "")
    numbers: dict = {
        "verdict": text("#verdict").get_attribute("data-verdict"),
        "plan_days": re.findall(r"[\d.]+", text("#plan h2").text_content()),
        "effort_days": [text("#effort-range").get_attribute("data-low"),
                        text("#effort-range").get_attribute("data-high")],
        "findings": _int(found.locator("p.figure").text_content()),
        "breaking": _int(found.locator("p.breaking strong").text_content().split()[0]),
        "chips": {c.split()[1]: _int(c.split()[0]) for c in found.locator("p.sevs .sev").all_text_contents()},
        "notes": _int(notes.split()[0]) if notes else 0,
        "notes_by_disposition": _pairs(notes.split(":", 1)[1]) if notes else {},
        "suppressed": _int(next(u for u in units if "suppressed" in u).split()[0]),
        "files": _int(cards["Scanned"].locator("p.figure").text_content()),
        "lines": _int(re.search(r"([\d,]+) lines", cards["Scanned"].text_content()).group(1)),
        "components": {}, "hotspots": {}, "plan": {}, "counts": None,
    }
    for row in text("#components tbody tr[data-component]").all():
        cells = row.locator("td")
        numbers["components"][row.get_attribute("data-component")] = (
            cells.nth(1).text_content().strip(), _int(cells.last.text_content()))
    for row in text("#hotspots tbody tr").all():
        cells = row.locator("td").all_text_contents()
        numbers["hotspots"][cells[0].strip()] = (_int(cells[1]), cells[2].strip())
    for item in text("#plan li.work").all():
        sites = re.match(r"([\d,]+) sites? in ([\d,]+) files?", item.locator(".work-meta a").first.text_content())
        numbers["plan"][item.get_attribute("data-rule")] = (_int(sites.group(1)), _int(sites.group(2)))
    rest = " ".join(text("#plan .plan-rest li").all_text_contents())
    numbers["plan_more"] = _int(m.group(1)) if (m := re.search(r"([\d,]+) smaller work item", rest)) else 0
    numbers["review_files"] = _int(m.group(1)) if (m := re.search(r"Run HIPIFY on ([\d,]+) file", rest)) else 0
    numbers["verify_items"] = _int(m.group(1)) if (m := re.search(r"([\d,]+) items to verify", rest)) else 0
    table = text("#live-counts")
    if table.count():
        heads = [h.strip() for h in table.locator("thead th").all_text_contents()][1:]
        rows = [r.locator("td").all_text_contents() for r in table.locator("tbody tr").all()]
        numbers["counts"] = {cells[0].strip(): {s: _int(n) for s, n in zip(heads, cells[1:], strict=True)}
                             for cells in rows}
        caption = table.locator("caption").text_content()
        numbers["caption"] = [_int(n) for n in re.findall(r"\(([\d,]+)\); ([\d,]+) note", caption)[0]]
    return numbers


def _component_of(path: str, components: list[str]) -> str:
    """The deepest component whose directory holds the path (components are directories, "." the root)."""
    owners = [c for c in components if c == "." or path == c or path.startswith(c.rstrip("/") + "/")]
    return max(owners, key=lambda c: (c != ".", len(c)))


def _at_least(severity: str):
    return lambda f: SEVERITIES.index(f["severity"]) <= SEVERITIES.index(severity)


# what each count a verdict's reason states counts, over the component's findings
_REASON_COUNTS = {
    "with no ROCm equivalent": lambda fs: sum(f["would_break"] and f["severity"] == "critical" for f in fs),
    "to change by hand": lambda fs: sum(f["would_break"] and _at_least("medium")(f) for f in fs),
    "Verify on hardware": lambda fs: sum(f["disposition"] == VERIFY for f in fs),
    "outside the main path": lambda fs: sum(f["disposition"] in OUTSIDE_MAIN_PATH and _at_least("medium")(f)
                                            and not f["guarded"] for f in fs),
}
_REASON_PATTERNS = {
    "with no ROCm equivalent": r"([\d,]+) finding\(s\) with no ROCm equivalent",
    "to change by hand": r"([\d,]+) finding\(s\) to change by hand",
    "Verify on hardware": r"Verify on hardware: ([\d,]+) item",
    "outside the main path": r"([\d,]+) note\(s\) outside the main path",
}


def _reason_numbers(reason: str) -> dict[str, int]:
    return {what: _int(m.group(1)) for what, pattern in _REASON_PATTERNS.items()
            if (m := re.search(pattern, reason))}


def disagreements(out: Outputs, page: dict | None) -> list[str]:
    """Each number that does not count the live set the JSON report's findings hold, in words."""
    report, summary = out.report, out.report["summary"]
    findings = report["findings"]
    live = [f for f in findings if f["would_break"]]
    notes = [f for f in findings if not f["would_break"]]
    by_severity = {s: sum(f["severity"] == s for f in live) for s in SEVERITIES}
    problems: list[str] = []

    def same(what: str, shown, expected) -> None:
        if shown != expected:
            problems.append(f"{what}: {shown!r}, the live set says {expected!r}")

    # the JSON summary
    same("json findings", summary["findings"], len(findings))
    same("json would_break", summary["would_break"], len(live))
    same("json live_by_severity", summary["live_by_severity"], by_severity)
    same("json live_by_category", {k: v for k, v in summary["live_by_category"].items() if v},
         dict(Counter(f["category"] for f in live)))
    same("json notes_by_disposition", summary["notes_by_disposition"], dict(Counter(f["disposition"] for f in notes)))
    same("json by_disposition", summary["by_disposition"], dict(Counter(f["disposition"] for f in findings)))
    same("json by_severity (every finding)", {k: v for k, v in summary["by_severity"].items() if v},
         dict(Counter(f["severity"] for f in findings)))
    failing = [f for f in live if SEVERITIES.index(f["severity"]) <= SEVERITIES.index(FAIL_ON)]
    same("exit code", out.code, 1 if failing else 0)
    paths = [c["path"] for c in report["components"]]
    weighed = Counter(_component_of(f["path"], paths) for f in live if f["severity"] != "info")
    for c in report["components"]:
        if c["kind"] == "primary" or not c["optional"]:
            same(f"json component {c['path']} live_findings", c["live_findings"], weighed[c["path"]])
        if c["verdict"] == "blocked" and not c["live_findings"]:
            problems.append(f"json component {c['path']}: blocked with 0 live findings")
        if c["kind"] == "primary":
            mine = [f for f in findings if _component_of(f["path"], paths) == c["path"]]
            for what, n in _reason_numbers(c["reason"]).items():
                same(f"component {c['path']} reason: {what}", n, _REASON_COUNTS[what](mine))

    # -q: a line per finding that fails the run, then the summary line
    head = next((line for line in out.quiet.splitlines() if line.startswith("rocm-audit: ")), "")
    lines = [line for line in out.quiet.splitlines() if re.match(r"\S+:\d+(:\d+)?: RA\d+ ", line)]
    same("-q finding lines", len(lines), len(failing))
    m = re.search(r"\(([\d,]+) files · ([\d,]+) would break on ROCm(?: \(([^)]*)\))?(?:, ([\d,]+) ha(?:s|ve) a ROCm)?",
                  head)
    if not m:
        problems.append(f"-q summary line not read: {head!r}")
    else:
        same("-q files", _int(m.group(1)), summary["files_scanned"])
        same("-q would break", _int(m.group(2)), len(live))
        shown = {p.split()[1]: _int(p.split()[0]) for p in (m.group(3) or "").split(":")[0].split(", ") if p}
        same("-q severities", shown, {s: n for s, n in by_severity.items() if n})
        same("-q notes", _int(m.group(4) or "0"), len(notes))
        if failing:
            same("-q failing count", _int(re.search(r"rocm-audit: ([\d,]+) finding", head).group(1)), len(failing))
    same("-q suppressed", _int(re.search(r"([\d,]+) suppressed", head).group(1)) if head else None,
         summary["suppressed"])

    # SARIF: what breaks, and what to verify at warning; the rest left out and counted
    run = out.sarif["runs"][0]
    results = run["results"]
    breaking = [r for r in results if r["properties"]["breaksOnRocm"]]
    verify = [f for f in notes if f["disposition"] == VERIFY]
    same("sarif breaking", len(breaking), len(live))
    same("sarif breaking by severity",
         {s: sum(r["properties"]["severity"] == s for r in breaking) for s in SEVERITIES}, by_severity)
    same("sarif verify warnings", sorted(r["level"] for r in results if r not in breaking), ["warning"] * len(verify))
    same("sarif left out", run["properties"]["notBreakingLeftOut"], len(notes) - len(verify))
    same("sarif resultsTotal", run["properties"]["resultsTotal"], len(live) + len(verify))
    same("sarif verdict", run["properties"]["verdict"], summary["verdict"])

    if page is not None:
        _page_disagreements(page, report, live, notes, by_severity, same)
    return problems


def _page_disagreements(page, report, live, notes, by_severity, same) -> None:
    summary, effort = report["summary"], report["effort"]
    same("page verdict", page["verdict"], summary["verdict"])
    same("page plan days", [float(x) for x in page["plan_days"]], [effort["low_days"], effort["high_days"]])
    same("page effort card", [float(x) for x in page["effort_days"]], [effort["low_days"], effort["high_days"]])
    same("page findings", page["findings"], len(live) + len(notes))
    same("page would break", page["breaking"], len(live))
    same("page severity chips", page["chips"], {s: n for s, n in by_severity.items() if n})
    same("page notes", page["notes"], len(notes))
    same("page notes by disposition", page["notes_by_disposition"], dict(Counter(f["disposition"] for f in notes)))
    same("page suppressed", page["suppressed"], summary["suppressed"])
    same("page files", page["files"], summary["files_scanned"])
    same("page lines", page["lines"], summary["lines_scanned"])
    for c in report["components"]:
        shown = page["components"].get(c["path"] if c["path"] != "." else "(root)")
        same(f"page component {c['path']}", shown, (c["verdict"], c["live_findings"]))
    per_file = Counter(f["path"] for f in live if f["severity"] != "info")
    for path, (n, cost_of) in page["hotspots"].items():
        if n == 0 and cost_of != "HIPIFY review":
            same(f"page hotspot {path} (0 findings, costs hours for)", cost_of, "HIPIFY review")
        if n > per_file[path]:
            same(f"page hotspot {path} live findings (at most the file's live ones)", n, per_file[path])
    for rule, (sites, files) in page["plan"].items():
        mine = [f for f in live if f["rule"] == rule and f["severity"] != "info"]
        same(f"page plan {rule} sites", sites, len(mine))
        same(f"page plan {rule} files", files, len({f["path"] for f in mine}))
    same("page plan items", len(page["plan"]) + page["plan_more"],
         len({f["rule"] for f in live if f["severity"] != "info"}))
    same("page HIPIFY review files", page["review_files"],
         effort["hipify_review_files"] if effort["hipify_review_days"][1] else 0)
    if page["plan"] and effort["validation_days"][1]:
        same("page verify items", page["verify_items"], sum(f["disposition"] == VERIFY for f in notes))
    if page["counts"] is None:
        same("page live-counts table", "absent", "absent" if not live else "present")
        return
    columns = {s: sum(row.get(s, 0) for row in page["counts"].values()) for s in SEVERITIES}
    same("page live-counts by severity", {s: n for s, n in columns.items() if n},
         {s: n for s, n in by_severity.items() if n})
    same("page live-counts by category", {cat: sum(row.values()) for cat, row in page["counts"].items()},
         {k: v for k, v in report["summary"]["live_by_category"].items() if v})
    same("page live-counts caption", page["caption"], [len(live), len(notes)])


def main(argv: list[str]) -> int:
    from playwright.sync_api import sync_playwright

    from scripts.screenshot import CHROMIUM_ARGS

    rows, bad = [], 0
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        chromium = shutil.which("chromium") or shutil.which("chromium-browser")
        browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        for i, name in enumerate(argv):
            out = audit(Path(name), Path(tmp) / str(i))
            page = browser.new_page()
            page.goto(out.html.as_uri())
            problems = disagreements(out, page_numbers(page))
            page.close()
            s = out.report["summary"]
            rows.append((Path(name).name, s["files_scanned"], s["verdict"], out.code, s["findings"], s["would_break"],
                         len(out.sarif["runs"][0]["results"]), len(problems)))
            for problem in problems:
                print(f"{Path(name).name}: {problem}", file=sys.stderr)
            bad += bool(problems)
        browser.close()
    print("| tree | files | verdict | exit | findings | live | SARIF results | disagreements |")
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(str(x) for x in row) + " |")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
