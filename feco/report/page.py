"""The report page: one self-contained HTML file, Plotly and the data inlined, no server, no network.

Sections are HTML with empty chart containers; ``page.js`` draws them from the one JSON
payload. A section without data is left out of the page's body and navigation: one list at the
end says what is not shown and why (``data-status="skipped"``), so no empty section is met.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from html import escape
from importlib.resources import files

import polars as pl

ASSETS = files("feco.report")


@dataclass
class Section:
    """One part of the page: its HTML body, or a note saying why it is skipped."""

    key: str
    title: str
    body: str = ""
    skipped: str | None = None

    def html(self) -> str:
        if self.skipped:
            return (f'<li data-section="{self.key}" data-status="skipped"><b>{escape(self.title)}</b>: '
                    f"{escape(self.skipped)}</li>")
        return (f'<section id="{self.key}" data-status="rendered">\n<h2>{escape(self.title)}</h2>\n'
                f"{self.body}\n</section>")


def chart(key: str) -> str:
    return f'<div id="{key}-chart" class="chart"></div>'


def select(key: str, label: str, options: list[tuple[str, str]] = ()) -> str:
    """A labelled drop-down; ``page.js`` fills it when ``options`` (value, text) is empty."""
    items = "".join(f'<option value="{escape(value)}">{escape(text)}</option>' for value, text in options)
    return f'<label>{escape(label)} <select id="{key}">{items}</select></label>'


def controls(*selects: str) -> str:
    return f'<div class="controls">{"".join(selects)}</div>'


def paragraph(text: str) -> str:
    return f"<p>{escape(text)}</p>"


def render_page(sections: list[Section], payload: dict, *, title: str, subtitle: str, plotly_js: str) -> str:
    """The whole page: heading, links to each section that has data, those sections, what is
    not shown and why, then the scripts."""
    shown = [s for s in sections if not s.skipped]
    links = " ".join(f'<a href="#{s.key}">{escape(s.title)}</a>' for s in shown)
    body = "\n".join(s.html() for s in shown)
    if skipped := [s for s in sections if s.skipped]:
        body += ('\n<section id="not-shown">\n<h2>Not in this report</h2>\n<ul class="note">'
                 + "".join(s.html() for s in skipped) + "</ul>\n</section>")
    data = script_json(payload)
    style = ASSETS.joinpath("page.css").read_text(encoding="utf-8")
    script = ASSETS.joinpath("page.js").read_text(encoding="utf-8")
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{escape(title)}</title><style>{style}</style></head>\n<body>\n"
            f"<h1>{escape(title)}</h1><p>{escape(subtitle)}</p>\n<nav>{links}</nav>\n{body}\n"
            f"<script>{plotly_js}</script>\n"
            f'<script type="application/json" id="feco-data">{data}</script>\n'
            f"<script>{script}</script>\n</body></html>\n")


def script_json(payload) -> str:
    r"""``payload`` as JSON text safe inside a ``<script>`` element: ``<``, ``>`` and ``&`` are
    written as ``\u003c``, ``\u003e`` and ``\u0026`` (JSON.parse reads them back), so no value
    can end the element (``</script>``) or open a comment (``<!--``) that swallows the page's
    own script.

    Examples
    --------
    >>> script_json({"segment_value": "<!--<script>"})
    '{"segment_value":"\\u003c!--\\u003cscript\\u003e"}'
    """
    text = json.dumps(payload, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def html_table(frame: pl.DataFrame, *, formats: dict[str, str] | None = None,
               links: dict[str, str] | None = None, row_classes: list[str] | None = None,
               notes: list[str] | None = None) -> str:
    """A frame as an HTML table; ``formats`` maps a column to a format spec such as ``.1f``,
    ``links`` a column to a column of its cells' link targets (not shown), ``row_classes``
    gives each row a CSS class, ``notes`` each row a full-width row below it (HTML, escaped by
    the caller; empty: none).

    Examples
    --------
    >>> html_table(pl.DataFrame({"a": ["x"], "b": [1.234]}), formats={"b": ".1f"})
    '<table><tr><th>a</th><th>b</th></tr>\\n<tr><td class="text">x</td><td>1.2</td></tr></table>'
    """
    formats, links = formats or {}, links or {}
    shown = [c for c in frame.columns if c not in links.values()]
    head = "".join(f"<th>{escape(c)}</th>" for c in shown)
    rows = []
    for k, row in enumerate(frame.iter_rows(named=True)):
        cells = []
        for column in shown:
            value = row[column]
            text = escape("" if value is None else format(value, formats.get(column, "")))
            if column in links:
                text = f'<a href="{escape(row[links[column]])}">{text}</a>'
            kind = ' class="text"' if isinstance(value, str) else ""
            cells.append(f"<td{kind}>{text}</td>")
        css = f' class="{row_classes[k]}"' if row_classes and row_classes[k] else ""
        rows.append(f"<tr{css}>" + "".join(cells) + "</tr>")
        if notes and notes[k]:
            rows.append(f'<tr class="note-row"><td class="text" colspan="{len(shown)}">{notes[k]}</td></tr>')
    return f"<table><tr>{head}</tr>\n" + "\n".join(rows) + "</table>"
