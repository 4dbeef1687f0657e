"""The history as text: a terminal trend (sparklines and deltas), JSON, CSV; and the points as the report's
Progress view (auditor/report/progress.py) for the HTML page."""
from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence

from auditor.util.escape import visible
from auditor.history.events import Delta, Event, delta, events
from auditor.history.record import RunRecord
from auditor.report.progress import PointData, ProgressView, progress_view

SPARKS = "▁▂▃▄▅▆▇█"
CSV_COLUMNS = ("commit", "committed_at", "author", "verdict", "live", "effort_low_days", "effort_high_days",
               "coverage", "complete", "by_rule")


def spark(values: Sequence[float]) -> str:
    if not values:
        return ""
    low, high = min(values), max(values)
    if high == low:
        return SPARKS[0 if high == 0 else 3] * len(values)
    return "".join(SPARKS[round((v - low) / (high - low) * (len(SPARKS) - 1))] for v in values)


def _signed(value: float, unit: str = "") -> str:
    text = f"{value:+g}".replace("-", "−")
    return f"{text}{unit}"


def event_sentence(e: Event) -> str:
    short, day = e.commit[:7], e.committed_at[:10]
    by = f", by {e.author}" if e.author else ""
    if e.kind == "dependency-added":
        site = f" at {e.site}" if e.site else ""
        return f"new CUDA-only dependency {e.subject} in {short} ({day}{by}){site}"
    if e.kind == "dependency-removed":
        return f"{e.subject} removed in {short} ({day}{by})"
    if e.kind == "verdict-changed":
        return f"verdict {e.before} → {e.after} in {short} ({day}{by})"
    return f"{e.subject}: live {e.before} → {e.after} in {short} ({day})"


def delta_sentence(d: Delta) -> str:
    text = (f"since {d.since[:10]}: live {_signed(d.live)}, effort {_signed(d.effort_low_days)}"
            f"…{_signed(d.effort_high_days)} d")
    if d.movers:
        text += "; biggest movers: " + ", ".join(f"{rule} {_signed(n)}" for rule, n in d.movers)
    return text


def headline_events(found: Sequence[Event]) -> list[Event]:
    """The events a lead reads first: dependencies and verdicts (rule movements are in the JSON and the CSV)."""
    return [e for e in found if e.kind != "rule-changed"]


def render_terminal(label: str, points: Sequence[RunRecord], notes: Sequence[str] = ()) -> str:
    lines = [f"History of {label}: {len(points)} point{'s' if len(points) != 1 else ''}"
             + (f", {points[0].where.committed_at[:10]} … {points[-1].where.committed_at[:10]}" if points else "")]
    lines += [f"  {note}" for note in notes]
    if not points:
        return "\n".join(lines) + "\n"
    lines.append(f"  {'commit':<9} {'date':<10}  {'verdict':<10} {'live':>6}  {'effort (d)':>13}")
    for p in points:
        w = p.where
        partial = "  partial" if not p.complete else ""
        lines.append(f"  {w.commit[:9]:<9} {w.committed_at[:10]:<10}  {p.verdict:<10} {p.live:>6}  "
                     f"{p.effort_low_days:>6g}–{p.effort_high_days:<6g}{partial}")
    lines.append(f"  live     {spark([p.live for p in points])}  {points[0].live} → {points[-1].live}")
    lines.append(f"  effort   {spark([p.effort_high_days for p in points])}  "
                 f"{points[0].effort_high_days:g} → {points[-1].effort_high_days:g} d (high)")
    lines.append(f"  verdict  {''.join(p.verdict[:1].upper() for p in points)}  (R ready, N needs-port, B blocked)")
    d = delta(points)
    if d is not None and len(points) > 1:
        lines.append(delta_sentence(d))
    for e in headline_events(events(points)):
        lines.append(f"  {event_sentence(e)}")
    return "\n".join(visible(line) for line in lines) + "\n"


def history_dict(repo: str, label: str, points: Sequence[RunRecord]) -> dict:
    d = delta(points)
    return {
        "repository": repo, "label": label,
        "points": [{"commit": p.where.commit, "committed_at": p.where.committed_at, "author": p.where.author,
                    "verdict": p.verdict, "live": p.live, "effort_low_days": p.effort_low_days,
                    "effort_high_days": p.effort_high_days, "coverage": p.coverage, "complete": p.complete,
                    "by_rule": p.live_by_rule(),
                    "dependencies": sorted(p.live_dependencies())} for p in points],
        "events": [e.as_dict() for e in events(points)],
        "delta": None if d is None else {"since": d.since, "live": d.live, "effort_low_days": d.effort_low_days,
                                         "effort_high_days": d.effort_high_days,
                                         "movers": [{"rule": r, "delta": n} for r, n in d.movers]},
    }


def render_json(repo: str, label: str, points: Sequence[RunRecord]) -> str:
    return json.dumps(history_dict(repo, label, points), indent=2) + "\n"


def render_csv(points: Sequence[RunRecord]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for p in points:
        by_rule = ";".join(f"{rule}={n}" for rule, n in p.live_by_rule().items())
        writer.writerow([p.where.commit, p.where.committed_at, _cell(p.where.author), p.verdict, p.live,
                         p.effort_low_days, p.effort_high_days, p.coverage, int(p.complete), by_rule])
    return out.getvalue()


def _cell(text: str) -> str:
    """A spreadsheet reads a cell starting with = + - @ as a formula: an author name must stay text."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def progress(label: str, points: Sequence[RunRecord]) -> ProgressView:
    found = headline_events(events(points))
    d = delta(points)
    summary = (delta_sentence(d) if d is not None and len(points) > 1
               else "one recorded point so far" if points else "no recorded point")
    return progress_view(label, [PointData(p.where.commit, p.where.committed_at, p.where.author, p.verdict, p.live,
                                           p.effort_low_days, p.effort_high_days, p.complete) for p in points],
                         [event_sentence(e) for e in reversed(found)], summary)
