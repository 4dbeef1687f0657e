"""The portfolio as terminal text and as JSON (the HTML page is auditor/cli/fleet/html.py)."""
from __future__ import annotations

import json

from auditor.util.errors import safe_text
from auditor.cli.fleet.portfolio import Blocker, Portfolio, portfolio_dict

SHOWN_BLOCKERS = 10


def render_json(portfolio: Portfolio) -> str:
    return json.dumps(portfolio_dict(portfolio), indent=2, ensure_ascii=False) + "\n"


def days(low: float, high: float) -> str:
    return f"{low:g}-{high:g} days"


def fix_sentence(blocker: Blocker) -> str:
    """`tensorrt-llm: unblocks 6 repositories, 120-300 days. Fix: move to vLLM …`"""
    count = len(blocker.repositories)
    head = f"{blocker.name}" if blocker.kind == "dependency" else f"{blocker.rule} {blocker.name}"
    touched = f"{count} repositor{'y' if count == 1 else 'ies'}"
    return f"{head}: in {touched}, {days(blocker.effort_low_days, blocker.effort_high_days)}" \
        + (f". Fix: {blocker.fix}" if blocker.fix else "")


def render_terminal(portfolio: Portfolio) -> str:
    t = portfolio.totals
    lines = [f"rocm-audit fleet: {t.repositories} repositories, {t.scanned} scanned, {t.failed} failed",
             (f"  ready {t.ready} · needs-port {t.needs_port} · blocked {t.blocked} · {t.ready_share:g}% of the "
              f"code scanned is in ready repositories · effort {days(t.effort_low_days, t.effort_high_days)}"), ""]
    width = max((len(r.name) for r in portfolio.repositories), default=10)
    for r in portfolio.repositories:
        if r.verdict is None:
            lines.append(f"  {safe_text(r.name):<{width}}  FAILED      {safe_text(r.reason)}")
            continue
        tail = f"  {safe_text(r.top_blocker)}" if r.top_blocker else ""
        effort = days(r.effort_low_days, r.effort_high_days)
        lines.append(f"  {safe_text(r.name):<{width}}  {r.verdict:<10}  {effort:<16}  confidence {r.confidence:<6}"
                     + tail + ("  (unchanged)" if r.status == "unchanged" else "")
                     + ("  (working tree changed since its commit)" if r.changed_tree else ""))
    if portfolio.blockers:
        lines += ["", "What blocks the most work, across repositories:"]
        lines += [f"  {safe_text(fix_sentence(b))}" for b in portfolio.blockers[:SHOWN_BLOCKERS]]
        lines += ["", "What touches the most repositories:"]
        lines += [f"  {safe_text(fix_sentence(b))}" for b in portfolio.widest(SHOWN_BLOCKERS)]
    return "\n".join(lines) + "\n"
