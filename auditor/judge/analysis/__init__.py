"""From per-file results to the answer: dispositions applied, verdict, effort, groups, policy."""
