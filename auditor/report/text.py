"""Rule and message text for people: the light Markdown of rule docs rendered to HTML or stripped for a
terminal, sentences joined without a doubled full stop, long text cut at a word."""
from __future__ import annotations

import html
import re

_CODE = re.compile(r"`([^`\n]+)`")
_STRONG = re.compile(r"\*\*([^*\n]+)\*\*")
_EMPHASIS = re.compile(r"(?<![\w*])[*_]([^*_\n]+)[*_](?![\w*])")
_ABBREVIATIONS = {"e.g", "i.e", "vs", "etc", "cf", "approx"}
_LINK = re.compile(r"\[([^\]\n]+)\]\(([^)\s]+)\)")


def paragraphs(text: str) -> tuple[str, ...]:
    """The paragraphs of text wrapped for a TOML file, each on one line."""
    return tuple(" ".join(p.split()) for p in (text or "").split("\n\n") if p.strip())


def plain(text: str) -> str:
    """Markdown -> plain text: `code` and **bold** keep their words, [links](url) keep their text."""
    out = _LINK.sub(lambda m: f"{m.group(1)} ({m.group(2)})", text or "")
    out = _CODE.sub(r"\1", out)
    out = _STRONG.sub(r"\1", out)
    return _EMPHASIS.sub(r"\1", out)


def inline_html(text: str) -> str:
    """Markdown -> escaped HTML with <code>, <strong> and <em>; a link becomes its text (the page fetches and
    links to nothing outside itself)."""
    pieces = []
    last = 0
    for m in _CODE.finditer(text or ""):
        pieces.append(_prose_html(text[last:m.start()]))
        pieces.append(f"<code>{html.escape(m.group(1))}</code>")
        last = m.end()
    pieces.append(_prose_html((text or "")[last:]))
    return "".join(pieces)


def _prose_html(text: str) -> str:
    out = html.escape(_LINK.sub(lambda m: f"{m.group(1)} ({m.group(2)})", text), quote=False)
    out = _STRONG.sub(r"<strong>\1</strong>", out)
    return _EMPHASIS.sub(r"<em>\1</em>", out)


def sentence(*parts: str) -> str:
    """Parts joined as sentences: each ends with one full stop (none doubled), empty parts dropped."""
    out = []
    for part in parts:
        part = " ".join((part or "").split()).rstrip()
        if not part:
            continue
        while part.endswith(".."):
            part = part[:-1]
        out.append(part if part[-1] in ".!?:)" or part.endswith("…") else part + ".")
    return " ".join(out)


def counted(n: int, word: str, plural: str | None = None) -> str:
    """`1 file`, `2 files`, `1,600 findings`."""
    return f"{n:,} {word if n == 1 else plural or word + 's'}"


def first_sentence(text: str) -> str:
    """Up to the first full stop that ends a sentence, without it."""
    flat = " ".join((text or "").split())
    for m in re.finditer(r"\.(?:\s|$)", flat):
        word = flat[:m.start()].rsplit(" ", 1)[-1].lower().lstrip("([{\"'")
        if word not in _ABBREVIATIONS and not re.fullmatch(r"\w(\.\w)*", word):
            return flat[:m.start()]
    return flat.rstrip(".")


def cut(text: str, limit: int) -> str:
    """At most `limit` characters, cut at a word, with an ellipsis when cut."""
    flat = " ".join((text or "").split())
    if len(flat) <= limit:
        return flat
    head = flat[: limit - 1]
    space = head.rfind(" ")
    return (head[:space] if space > limit // 2 else head).rstrip(" ,;:.") + "…"
