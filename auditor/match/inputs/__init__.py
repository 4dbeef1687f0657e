"""Input kinds: the one registry of the kinds of file rocm-audit reads (`kinds.py`: how a path is claimed, the
engine that scans it, what it reads of the run's facts) and the `Engine` protocol every engine meets
(`engine.py`)."""
