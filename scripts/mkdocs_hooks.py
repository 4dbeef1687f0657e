"""mkdocs hook: the site's home page is README.md, with its links into docs/ made relative to the site."""
from __future__ import annotations

import re
from pathlib import Path

from mkdocs.structure.files import File, Files

README = Path(__file__).resolve().parent.parent / "README.md"
_DOCS_LINK = re.compile(r"\]\(docs/")


def on_files(files: Files, config) -> Files:
    text = _DOCS_LINK.sub("](", README.read_text(encoding="utf-8"))
    files.append(File.generated(config, "index.md", content=text))
    return files
