"""The calls layer of Python reach: a function no reached code calls is not called by default, so what it holds is
an optional feature, not work for a ROCm install. From each scanned module's facts (auditor/match/engines/python/
functions.py): a module-level function that nothing refers to, in its own module or any other scanned one (a call
that is commented out is none), when it is a JIT kernel or helper (`@triton.jit`), a private `_name`, or a function
of a script outside the shipped packages (of a project whose packaging names them). A public function of a shipped
package is its API: users call it."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from auditor.match.engines.python.functions import FILE_NAMES, FILE_VALUES, JIT, PRIVATE, SELECTED, Functions


@dataclass(frozen=True)
class Uncalled:
    """A function nothing calls: its name and lines."""

    name: str
    first: int
    last: int
    selected: bool = False   # a branch a caller selects with a value nothing passes

    @property
    def note(self) -> str:
        if self.selected:
            chosen = " or ".join(f"`{value}`" for value in self.name.split(" or "))
            return (f"not called by default: this branch runs only when a caller chooses {chosen}, which no "
                    "default or call of the project does (an optional feature)")
        return f"not called by default: no code of the project calls `{self.name}`"


def not_called_by_default(functions: Mapping[str, Functions],
                          shipped: Iterable[str]) -> dict[str, tuple[Uncalled, ...]]:
    """path -> the functions of that module nothing calls. `functions`: each scanned Python module's
    FileFacts.functions; `shipped`: the shipped packages' directories (empty when the packaging names none)."""
    packages = tuple(shipped)
    referred: dict[str, set[str]] = {}
    passed: set[str] = set()   # the strings used as values: a choice is made only by passing its name as one
    for path, entries in functions.items():
        for name, _, _, names in entries:
            if name == FILE_NAMES:
                for referred_name in names:
                    referred.setdefault(referred_name, set()).add(path)
            elif name == FILE_VALUES:
                passed.update(names)
    out: dict[str, tuple[Uncalled, ...]] = {}
    for path, entries in functions.items():
        in_package = any(path.startswith(p + "/") for p in packages)
        found = tuple(Uncalled(name, first, last) for name, first, last, kind in entries
                      if name not in (FILE_NAMES, FILE_VALUES) and kind[0] != SELECTED
                      and not (referred.get(name, set()) - {path})
                      and (kind[0] in (JIT, PRIVATE) or bool(packages) and not in_package))
        found += tuple(Uncalled(" or ".join(kind[1:]) or name, first, last, selected=True)
                       for name, first, last, kind in entries
                       if name not in (FILE_NAMES, FILE_VALUES) and kind[0] == SELECTED
                       and not any(value in passed for value in kind[1:] or (name,)))
        if found:
            out[path] = found
    return out
