"""Which commits of the first-parent history become points: up to N, evenly spread, always the first, the
last and every tagged commit in range (tags thinned evenly only when they alone exceed N)."""
from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, timezone

from auditor.history.gitobjects import Commit

DATE = re.compile(r"^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?(?:Z|[+-]\d{2}:?\d{2})?$")


def as_date(text: str) -> str | None:
    """An ISO date or time as ISO UTC, or None when `text` is not one (then it is a revision)."""
    if not DATE.match(text.strip()):
        return None
    moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).isoformat()


def spread(indexes: Sequence[int], count: int) -> list[int]:
    """`count` of `indexes` (sorted), evenly spaced, keeping the first and the last."""
    if count >= len(indexes):
        return list(indexes)
    if count <= 1:
        return list(indexes[:count])
    step = (len(indexes) - 1) / (count - 1)
    return sorted({indexes[round(k * step)] for k in range(count)})


def sample(commits: Sequence[Commit], tags: dict[str, str], max_points: int) -> list[Commit]:
    """Up to `max_points` of `commits` (oldest first)."""
    n = len(commits)
    if n <= max_points:
        return list(commits)
    required = {0, n - 1} if max_points >= 2 else {n - 1}
    tagged = [i for i, c in enumerate(commits) if c.id in tags and i not in required]
    required.update(spread(tagged, max(0, max_points - len(required))))
    step = (n - 1) / (max_points - 1) if max_points > 1 else 0.0
    chosen = required | {round(k * step) for k in range(max_points)}
    while len(chosen) > max_points:      # drop the grid point that sits closest between its neighbours
        order = sorted(chosen)
        _, extra = min((order[j + 1] - order[j - 1], order[j]) for j in range(1, len(order) - 1)
                       if order[j] not in required)
        chosen.discard(extra)
    return [commits[i] for i in sorted(chosen)]


def in_range(commits: Sequence[Commit], since: str | None, since_commit: str | None) -> list[Commit]:
    """The commits from `since` (an ISO UTC time) or from `since_commit` (inclusive) on."""
    if since_commit is not None:
        ids = [c.id for c in commits]
        return list(commits[ids.index(since_commit):]) if since_commit in ids else []
    if since is not None:
        return [c for c in commits if c.committed_at >= since]
    return list(commits)
