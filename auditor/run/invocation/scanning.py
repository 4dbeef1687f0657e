"""The audit `check` runs on its paths, shared by `check`, `baseline` and the fleet's scan of one repository: the
pipeline's audit, a scan of nothing refused, the result cache trimmed."""
from __future__ import annotations

from pathlib import Path

from auditor.util.errors import ToolError


def audit_tree(paths, rulebook, options, *, shown_root: str | None = None, progress=None, root: Path | None = None,
               phase=None):
    """The Report of `paths` (auditor/run/pipeline audit); a ToolError when directories hold nothing to scan.
    `phase`: told each step around the scan (auditor.run.pipeline.PHASES)."""
    from auditor.run.pipeline import audit
    from auditor.run.runner.cache import evict

    paths = tuple(paths)
    report = audit(paths, rulebook, options, shown_root=shown_root, progress=progress, root=root, phase=phase)
    if not report.results and not report.errors and all(p.is_dir() for p in paths):
        # an empty or mistyped directory is not READY: CI must not pass on a scan of nothing. (Files named one
        # by one, as the pre-commit hook passes them, may all be of kinds we do not read: that is a clean run.)
        hint = " (`rocm-audit demo` scans the example that ships with rocm-audit)" if paths == (Path("."),) else ""
        raise ToolError(f"nothing to scan in {', '.join(str(p) for p in paths)}: "
                        f"no CUDA, C/C++, Python or manifest files{hint}")
    evict(options.cache_dir)
    return report
