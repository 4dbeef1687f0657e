"""The fix run's one header of definitions (auditor/fix/compat.py chooses it): its outcome is made from what the
run's C/C++ edits use, and it stands or falls with them: when no kept edit uses it, it is not made; when it cannot
be made or written, the edits that use it are rolled back."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from auditor.fix.compat import home_text
from auditor.fix import definitions
from auditor.fix.outcome import FileOutcome
from auditor.fix.safewrite import identity
from auditor.run.scan.file import InputError, read_bytes
from auditor.types import SourceFile

MADE = "the definitions the fixes use"


def definition_blocks() -> dict[str, str]:
    """The definitions by name, as the C/C++ fixer writes them."""
    return {definitions.FULL_MASK: definitions.FULL_MASK_DEFINITION,
            "ROCM_AUDIT_NANOSLEEP": definitions.SLEEP_DEFINITION}


def _users(outcomes: Sequence[FileOutcome], home: str) -> list[FileOutcome]:
    return [o for o in outcomes if o.changed and o.path != home and o.defines]


def with_home(outcomes: Sequence[FileOutcome], home: str | None, root: Path, sources: dict[str, SourceFile],
              max_bytes: int) -> list[FileOutcome]:
    """The outcomes with the home's: a new header, or the existing one with the definitions it lacks."""
    users = _users(outcomes, home) if home else []
    if not home or not users:
        return list(outcomes)
    needed = sorted({name for o in users for name in o.defines})
    mine = next((o for o in outcomes if o.path == home), None)
    if mine is not None:
        return [replace(o, new=home_text(o.new, needed, definition_blocks())) if o is mine else o for o in outcomes]
    source = sources.get(home)
    if source is None:
        made = FileOutcome(home, str(root / home), "", home_text(None, needed, definition_blocks()), (), (),
                           created=True, note=MADE)
        return [made, *outcomes]
    try:
        old = read_bytes(source, max_bytes).decode("utf-8")
    except (InputError, UnicodeDecodeError) as err:
        why = f"the header for the fixer's definitions ({home}) cannot be read ({err})"
        return [_rolled(o, why) if o in users else o for o in outcomes]
    if (text := home_text(old, needed, definition_blocks())) == old:
        return list(outcomes)   # it holds them already (an earlier run made it)
    added = FileOutcome(home, source.abspath, old, text, (), (), planned=identity(source.abspath), note=MADE + " added")
    return [added, *outcomes]


def settle(outcomes: Sequence[FileOutcome], home: str | None) -> list[FileOutcome]:
    """After rollbacks: the edits that use a home left unchanged are rolled back too; a home no kept edit uses
    is not made (a new one) or keeps its text (the project's)."""
    if not home:
        return list(outcomes)
    mine = next((o for o in outcomes if o.path == home), None)
    if mine is None:
        return list(outcomes)
    users = _users(outcomes, home)
    if mine.rolled_back:
        why = f"its definitions' header {home} was left unchanged ({mine.rolled_back})"
        return [_rolled(o, why) if o in users else o for o in outcomes]
    if users or mine.applied:
        return list(outcomes)
    if mine.created:
        return [o for o in outcomes if o is not mine]
    return [replace(o, new=o.old, note=None) if o is mine else o for o in outcomes]


def _rolled(outcome: FileOutcome, why: str) -> FileOutcome:
    return replace(outcome, new=outcome.old, applied=(), rolled_back=why)
