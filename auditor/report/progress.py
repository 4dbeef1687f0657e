"""The "Progress" section's view-model: a burn-down of live findings with the effort band and the verdict as a
colored band, as inline SVG geometry (drawn by templates/progress.html.j2, no script), and the events list.
Built from plain points so that the report stage knows nothing of the store (auditor/history builds them)."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

WIDTH, HEIGHT = 760, 260
LEFT, RIGHT, TOP, BOTTOM = 48, 56, 14, 44          # margins: live axis left, effort axis right, verdict band below
BAND = 10                                           # px height of the verdict band
VERDICT_COLORS = {"ready": "#1f7a44", "needs-port": "#b7791f", "blocked": "#b3261e"}
TICKS = 4


@dataclass(frozen=True, slots=True)
class PointData:
    commit: str
    committed_at: str
    author: str
    verdict: str
    live: int
    effort_low_days: float
    effort_high_days: float
    complete: bool


@dataclass(frozen=True, slots=True)
class ChartPoint:
    data: PointData
    x: float
    y: float                  # the live line
    low_y: float              # the effort band
    high_y: float

    @property
    def short(self) -> str:
        return self.data.commit[:10]

    @property
    def label(self) -> str:
        d = self.data
        return (f"{d.commit[:10]} · {d.committed_at[:10]} · {d.author} · {d.verdict} · live {d.live} · effort "
                f"{d.effort_low_days:g}–{d.effort_high_days:g} d" + ("" if d.complete else " · partial scan"))


@dataclass(frozen=True, slots=True)
class VerdictSpan:
    x: float
    width: float
    verdict: str
    color: str


@dataclass(frozen=True, slots=True)
class Tick:
    y: float
    text: str


@dataclass(frozen=True, slots=True)
class ProgressView:
    repository: str
    points: tuple[ChartPoint, ...]
    live_path: str            # SVG polyline points
    band_path: str            # SVG polygon points: effort high forward, low back
    verdicts: tuple[VerdictSpan, ...]
    live_ticks: tuple[Tick, ...]
    effort_ticks: tuple[Tick, ...]
    events: tuple[str, ...]   # one sentence each, newest first
    summary: str              # "since …: live −42, effort −6.5 d"
    width: int = WIDTH
    height: int = HEIGHT
    plot_left: int = LEFT
    plot_right: int = WIDTH - RIGHT
    plot_bottom: int = HEIGHT - BOTTOM
    band_y: int = HEIGHT - BOTTOM + 6
    band_height: int = BAND


def _nice(top: float) -> float:
    """A round axis maximum at or above `top`."""
    if top <= 0:
        return 1.0
    magnitude = 10 ** (len(str(int(top))) - 1)
    for step in (1, 2, 2.5, 5, 10):
        if step * magnitude >= top:
            return step * magnitude
    return 10.0 * magnitude


def _whole_step(most: int) -> int:
    """The smallest of 1, 2, 5, 10, 20, 50, … that reaches `most` in TICKS steps."""
    magnitude = 1
    while True:
        for step in (1, 2, 5):
            if step * magnitude * TICKS >= most:
                return step * magnitude
        magnitude *= 10


def progress_view(repository: str, points: Sequence[PointData], events: Sequence[str], summary: str) -> ProgressView:
    """The chart's geometry: x by commit time (by position when the times do not differ), live findings on the
    left axis, effort days on the right."""
    from datetime import datetime

    bottom, left, right = HEIGHT - BOTTOM, LEFT, WIDTH - RIGHT
    times = [datetime.fromisoformat(p.committed_at).timestamp() if p.committed_at else 0.0 for p in points]
    span = (max(times) - min(times)) if times else 0.0
    n = len(points)
    if span > 0:
        xs = [left + (right - left) * (t - min(times)) / span for t in times]
    else:
        xs = [left + (right - left) * (i / (n - 1) if n > 1 else 0.5) for i in range(n)]
    live_top = _whole_step(max((p.live for p in points), default=0)) * TICKS    # whole numbers at every tick
    days_top = _nice(max((p.effort_high_days for p in points), default=0.0))

    def y_live(v: float) -> float:
        return round(bottom - (bottom - TOP) * v / live_top, 1)

    def y_days(v: float) -> float:
        return round(bottom - (bottom - TOP) * v / days_top, 1)

    chart = tuple(ChartPoint(p, round(x, 1), y_live(p.live), y_days(p.effort_low_days), y_days(p.effort_high_days))
                  for p, x in zip(points, xs))
    spans = []
    for i, point in enumerate(chart):
        start = left if i == 0 else (chart[i - 1].x + point.x) / 2
        end = right if i == n - 1 else (point.x + chart[i + 1].x) / 2
        spans.append(VerdictSpan(round(start, 1), round(max(end - start, 1.0), 1), point.data.verdict,
                                 VERDICT_COLORS.get(point.data.verdict, "#8a93a3")))
    band = [f"{c.x},{c.high_y}" for c in chart] + [f"{c.x},{c.low_y}" for c in reversed(chart)]
    return ProgressView(
        repository=repository, points=chart, live_path=" ".join(f"{c.x},{c.y}" for c in chart),
        band_path=" ".join(band), verdicts=tuple(spans),
        live_ticks=tuple(Tick(y_live(live_top * k / TICKS), f"{live_top * k / TICKS:g}") for k in range(TICKS + 1)),
        effort_ticks=tuple(Tick(y_days(days_top * k / TICKS), f"{days_top * k / TICKS:g} d")
                           for k in range(TICKS + 1)),
        events=tuple(events), summary=summary)
