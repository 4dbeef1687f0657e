"""Write the rule pages, `docs/rules/RAnnn.md` and `docs/rules/index.md`, from the rulebook and the fix registry:
the same text `rocm-audit rule RAnnn` prints (auditor/cli/rulepage.py). Run after changing a rule or a fix;
tests/test_rule_docs.py fails while a page is stale.

    .venv/bin/python scripts/build_rule_docs.py [--check]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from auditor.cli.rulepage import index_page, rule_page
from auditor.fix.data import shipped_fixes
from auditor.match.rulebook import load_rulebook

OUT = Path(__file__).resolve().parent.parent / "docs" / "rules"


def expected_pages() -> dict[str, str]:
    """file name under docs/rules/ -> its text."""
    rulebook = load_rulebook()
    fixes = shipped_fixes()
    pages = {f"{rule.id}.md": rule_page(rule, fixes.get(rule.id)) for rule in rulebook.rules}
    pages["index.md"] = index_page(rulebook.rules, fixes)
    return pages


def stale_pages(out: Path = OUT) -> list[str]:
    """Pages missing, different, or left over from a removed rule."""
    pages = expected_pages()
    present = {path.name for path in out.glob("*.md")}
    stale = [name for name, text in pages.items()
             if not (out / name).is_file() or (out / name).read_text(encoding="utf-8") != text]
    return sorted(stale + sorted(present - set(pages)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only say which pages are stale (exit 1 if any)")
    args = parser.parse_args(argv)
    if args.check:
        stale = stale_pages()
        print("\n".join(stale) or "every rule page is up to date")
        return 1 if stale else 0
    OUT.mkdir(parents=True, exist_ok=True)
    pages = expected_pages()
    for path in OUT.glob("*.md"):
        if path.name not in pages:
            path.unlink()
    for name, text in pages.items():
        (OUT / name).write_text(text, encoding="utf-8")
    print(f"wrote {len(pages)} pages to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
