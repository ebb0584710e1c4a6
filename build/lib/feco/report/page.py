"""The report page: plain HTML with relative image links, so it opens from disk with no server."""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape

import polars as pl

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 24px auto; max-width: 1420px; color: #222; }
h1 { margin-bottom: 4px; } h2 { border-bottom: 1px solid #ccc; padding-bottom: 4px; margin-top: 36px; }
img { max-width: 100%; height: auto; display: block; margin: 8px 0; }
table { border-collapse: collapse; font-size: 13px; margin: 8px 0; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: right; }
th { background: #f3f3f3; } td.text { text-align: left; }
p.note { color: #666; font-style: italic; }
nav a { margin-right: 14px; }
"""


@dataclass
class Section:
    """One part of the page: rendered with images and tables, or skipped with a short note."""

    key: str
    title: str
    text: str = ""
    images: list[tuple[str, str]] = field(default_factory=list)  # (file name, alt text)
    tables: list[str] = field(default_factory=list)             # rendered <table> HTML
    skipped: str | None = None

    def html(self) -> str:
        status = "skipped" if self.skipped else "rendered"
        parts = [f'<section id="{self.key}" data-status="{status}">', f"<h2>{escape(self.title)}</h2>"]
        if self.skipped:
            parts.append(f'<p class="note">{escape(self.skipped)}</p>')
        else:
            if self.text:
                parts.append(f"<p>{escape(self.text)}</p>")
            parts += [f'<img src="{escape(src)}" alt="{escape(alt)}">' for src, alt in self.images]
            parts += self.tables
        return "\n".join(parts + ["</section>"])


def render_page(sections: list[Section], *, title: str, subtitle: str) -> str:
    """The whole page: a heading, links to each section, then the sections in order."""
    links = " ".join(f'<a href="#{s.key}">{escape(s.title)}</a>' for s in sections)
    body = "\n".join(s.html() for s in sections)
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>{escape(title)}</title><style>{_STYLE}</style></head>\n<body>\n"
            f"<h1>{escape(title)}</h1><p>{escape(subtitle)}</p>\n<nav>{links}</nav>\n{body}\n"
            f"</body></html>\n")


def html_table(frame: pl.DataFrame, *, formats: dict[str, str] | None = None) -> str:
    """A frame as an HTML table; ``formats`` maps a column to a format spec such as ``.1f``.

    Examples
    --------
    >>> html_table(pl.DataFrame({"a": ["x"], "b": [1.234]}), formats={"b": ".1f"})
    '<table><tr><th>a</th><th>b</th></tr>\\n<tr><td class="text">x</td><td>1.2</td></tr></table>'
    """
    formats = formats or {}
    head = "".join(f"<th>{escape(c)}</th>" for c in frame.columns)
    rows = []
    for row in frame.iter_rows():
        cells = []
        for column, value in zip(frame.columns, row):
            text = "" if value is None else format(value, formats.get(column, ""))
            kind = ' class="text"' if isinstance(value, str) else ""
            cells.append(f"<td{kind}>{escape(text)}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><tr>{head}</tr>\n" + "\n".join(rows) + "</table>"
