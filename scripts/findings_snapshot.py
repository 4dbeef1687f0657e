"""Check that a change to the engines or the prefilter leaves the findings alone: save every finding of some
trees (one line each: path, line, column, rule, subject, severity, guarded), then compare two saves per file.

    .venv/bin/python scripts/findings_snapshot.py save before.txt TREE...    # on the old code
    .venv/bin/python scripts/findings_snapshot.py save after.txt TREE...     # on the new code
    .venv/bin/python scripts/findings_snapshot.py compare before.txt after.txt

Runs without the cache (--no-cache) so every file is scanned by the code under test."""
from __future__ import annotations

import argparse
import os
import sys
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def save(out: Path, trees: list[Path], jobs: int) -> int:
    from auditor.run.pipeline import ScanOptions, audit
    from auditor.match.rulebook import load_rulebook

    rulebook = load_rulebook()
    lines: list[str] = []
    for tree in trees:
        report = audit([tree], rulebook, ScanOptions(jobs=jobs))
        for f in report.findings:
            lines.append("\t".join((tree.name, f.path, str(f.span.line), str(f.span.column), f.rule_id,
                                    f.subject, f.severity.label, str(f.guarded))))
        for path, message in report.errors:
            lines.append("\t".join((tree.name, path, "error", message)))
        print(f"{tree.name}: {len(report.results)} files, {len(report.findings)} findings", file=sys.stderr)
    out.write_text("\n".join(sorted(lines)) + "\n", encoding="utf-8")
    return 0


def _per_file(path: Path) -> dict[tuple[str, str], list[str]]:
    files: dict[tuple[str, str], list[str]] = defaultdict(list)
    for line in path.read_text(encoding="utf-8").splitlines():
        tree, name, rest = line.split("\t", 2)
        files[(tree, name)].append(rest)
    return files


def compare(before: Path, after: Path) -> int:
    old, new = _per_file(before), _per_file(after)
    differing = sorted(key for key in old.keys() | new.keys() if sorted(old.get(key, [])) != sorted(new.get(key, [])))
    total = sum(map(len, old.values()))
    print(f"{len(old.keys() | new.keys())} files with findings; {total} findings before, "
          f"{sum(map(len, new.values()))} after; {len(differing)} files differ")
    for key in differing[:50]:
        gone = sorted(set(old.get(key, [])) - set(new.get(key, [])))
        added = sorted(set(new.get(key, [])) - set(old.get(key, [])))
        print(f"  {key[0]}/{key[1]}: -{len(gone)} +{len(added)}")
        for row in gone[:5]:
            print(f"    - {row}")
        for row in added[:5]:
            print(f"    + {row}")
    return 1 if differing else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("save")
    s.add_argument("out", type=Path)
    s.add_argument("trees", type=Path, nargs="+")
    s.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    c = sub.add_parser("compare")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    args = parser.parse_args(argv)
    if args.command == "save":
        return save(args.out, args.trees, args.jobs)
    return compare(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
