"""A static page's elements as the tests read them without a browser (the pages rocm-audit writes that hold no
script: the fleet's portfolio, the history chart)."""
from __future__ import annotations

from html.parser import HTMLParser


class PageParts(HTMLParser):
    """The page's elements in order, each with the section it is in (the last id seen: sections follow one another)
    and the table row it is in, and the text of each figure and field."""

    def __init__(self, html: str):
        super().__init__()
        self.section, self.row = "", ""
        self.elements: list[dict] = []
        self.open: dict | None = None      # the figure or field whose text is being read
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.section = attrs.get("id") or self.section
        if tag == "tr":
            self.row = attrs.get("data-name") or attrs.get("data-key") or ""
        element = {"tag": tag, "section": self.section, "row": self.row, **attrs, "text": ""}
        self.elements.append(element)
        if "data-total" in attrs or "data-field" in attrs:
            self.open = element

    def handle_data(self, data):
        if self.open is not None:
            self.open["text"] += data

    def handle_endtag(self, tag):
        if self.open is not None and tag == self.open["tag"]:
            self.open = None

    def all(self, tag: str, section: str, css_class: str | None = None) -> list[dict]:
        return [e for e in self.elements if e["tag"] == tag and e["section"] == section
                and (css_class is None or css_class in e.get("class", "").split())]

    def text(self, section: str, row: str, key: str) -> str:
        return next(e["text"] for e in self.elements if e["section"] == section and e["row"] == row
                    and key in (e.get("data-total"), e.get("data-field")))
