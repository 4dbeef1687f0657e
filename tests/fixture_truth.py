"""Read a fixture's EXPECTED.md: the sites a CUDA engineer listed by hand, and the look-alikes."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROW = re.compile(r"^\|\s*`?([^|`]+?):(\d+)`?\s*\|(.*)\|\s*$")


@dataclass(frozen=True)
class Site:
    path: str
    line: int
    category: str
    severity: str
    guarded: bool
    what: str


@dataclass(frozen=True)
class Truth:
    verdict: str
    sites: tuple[Site, ...]
    lookalikes: tuple[tuple[str, int, str], ...]


def read_truth(fixture: Path) -> Truth:
    text = (fixture / "EXPECTED.md").read_text(encoding="utf-8")
    verdict = re.search(r"Expected verdict: \*\*([a-z-]+)\*\*", text).group(1)
    sites, lookalikes, section = [], [], ""
    for line in text.splitlines():
        if line.startswith("## "):
            section = line.lower()
        m = ROW.match(line)
        if not m:
            continue
        cells = [c.strip() for c in m.group(3).split("|")]
        if "look-alike" in section or "must not" in section:
            lookalikes.append((m.group(1), int(m.group(2)), cells[0]))
        else:
            sites.append(Site(m.group(1), int(m.group(2)), cells[0], cells[1], cells[2].startswith("y"), cells[3]))
    return Truth(verdict, tuple(sites), tuple(lookalikes))
