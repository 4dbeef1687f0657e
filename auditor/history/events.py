"""What changed between consecutive points: CUDA-only dependencies added or removed, verdict changes, live
findings per rule; and the deltas over the whole range that a lead asks for."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from auditor.history.record import RunRecord

MOVERS = 5                       # rules listed as the biggest movers


@dataclass(frozen=True, slots=True)
class Event:
    commit: str
    committed_at: str
    author: str
    kind: str                    # dependency-added | dependency-removed | verdict-changed | rule-changed
    subject: str                 # the package, the rule id, or "verdict"
    before: str = ""             # verdict-changed: the old verdict; rule-changed: the old count
    after: str = ""
    site: str = ""               # dependency-added: its first site, path:line

    def as_dict(self) -> dict:
        out: dict = {"commit": self.commit, "committed_at": self.committed_at, "author": self.author,
                     "kind": self.kind}
        if self.kind.startswith("dependency"):
            out["package"] = self.subject
            if self.site:
                out["site"] = self.site
        elif self.kind == "rule-changed":
            out.update(rule=self.subject, before=int(self.before), after=int(self.after),
                       delta=int(self.after) - int(self.before))
        else:
            out.update(before=self.before, after=self.after)
        return out


@dataclass(frozen=True, slots=True)
class Delta:
    """From the first point to the last."""

    since: str                   # the first point's commit time
    live: int
    effort_low_days: float
    effort_high_days: float
    movers: tuple[tuple[str, int], ...]   # (rule, change in live findings), largest change first


def events(points: Sequence[RunRecord]) -> list[Event]:
    found: list[Event] = []
    for before, after in zip(points, points[1:]):
        w = after.where

        def event(kind: str, subject: str, old: str = "", new: str = "", site: str = "", where=w) -> Event:
            return Event(where.commit, where.committed_at, where.author, kind, subject, old, new, site)

        old_deps, new_deps = before.live_dependencies(), after.live_dependencies()
        found += [event("dependency-added", name, site=dep.first_site)
                  for name, dep in sorted(new_deps.items()) if name not in old_deps]
        found += [event("dependency-removed", name) for name in sorted(old_deps) if name not in new_deps]
        if before.verdict != after.verdict:
            found.append(event("verdict-changed", "verdict", before.verdict, after.verdict))
        old_rules, new_rules = before.live_by_rule(), after.live_by_rule()
        for rule in sorted(old_rules.keys() | new_rules.keys()):
            if old_rules.get(rule, 0) != new_rules.get(rule, 0):
                found.append(event("rule-changed", rule, str(old_rules.get(rule, 0)), str(new_rules.get(rule, 0))))
    return found


def delta(points: Sequence[RunRecord]) -> Delta | None:
    if not points:
        return None
    first, last = points[0], points[-1]
    old_rules, new_rules = first.live_by_rule(), last.live_by_rule()
    moved = [(rule, new_rules.get(rule, 0) - old_rules.get(rule, 0)) for rule in old_rules.keys() | new_rules.keys()]
    moved = sorted((m for m in moved if m[1]), key=lambda m: (-abs(m[1]), m[0]))[:MOVERS]
    return Delta(first.where.committed_at, last.live - first.live,
                 round(last.effort_low_days - first.effort_low_days, 2),
                 round(last.effort_high_days - first.effort_high_days, 2), tuple(moved))
