"""The modules a distribution's entry points run (`console_scripts` in setup.py, `[project.scripts]` and
`[project.entry-points.*]` in pyproject.toml): each is imported when its command runs, as `import <package>` is,
so what it imports (`import pkg.sub` of a submodule the package's `__init__` leaves alone) is reached too."""
from __future__ import annotations

import re
import tomllib
from auditor.util.tomltext import load_toml
from collections.abc import Iterable

# `"gpukit = gpukit.cli:main"` in a setup.py's entry_points
SETUP_ENTRY = re.compile(r"""["']\s*[\w.-]+\s*=\s*([A-Za-z_][\w.]*)\s*:\s*[A-Za-z_][\w.]*\s*(?:\[[^\]]*\])?\s*["']""")
TABLES = ("scripts", "gui-scripts")


def entry_modules(setup_texts: Iterable[str], pyproject_texts: Iterable[str]) -> frozenset[str]:
    """Module names the entry points of these setup.py and pyproject.toml texts name."""
    found = {m for text in setup_texts for m in SETUP_ENTRY.findall(text)}
    for text in pyproject_texts:
        try:
            project = load_toml(text).get("project") or {}
        except (tomllib.TOMLDecodeError, ValueError):
            continue
        tables = [project.get(t) for t in TABLES] + list((project.get("entry-points") or {}).values())
        for table in tables:
            if isinstance(table, dict):
                found |= {v.split(":", 1)[0].strip() for v in table.values() if isinstance(v, str) and ":" in v}
    return frozenset(found)
