"""The single self-contained HTML page: inline CSS, figures embedded as base64 PNG.

Every string that comes from results (model names, task names, topics, model outputs) goes through
:func:`html.escape`; the page is assembled only from the fixed markup in this module. The only script
is :data:`SORT_SCRIPT` (click a leaderboard header to sort); without JavaScript the tables are plain.
"""

from __future__ import annotations

import base64
import html
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from plumbing.jsonio import clean_text, dumps

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI","Noto Sans","Noto Sans CJK SC","Noto Sans CJK JP","Noto Sans CJK KR","Microsoft YaHei","PingFang SC",sans-serif;margin:2em auto;max-width:1600px;color:#222;padding:0 1em}
p,ul,h1,h2,h3{max-width:1200px}
h1{font-size:1.6em}h2{font-size:1.3em;border-bottom:1px solid #ccc;margin-top:2em}h3{font-size:1.05em}
table{border-collapse:collapse;margin:.5em 0 1em;font-size:.85em}th,td{border:1px solid #ddd;padding:3px 7px;text-align:right}
th{background:#f4f4f4}td.l,th.l{text-align:left}img{max-width:100%;border:1px solid #eee;margin:.5em 0}
p.note{color:#555;font-size:.9em}.scroll{overflow-x:auto}
caption{text-align:left;font-weight:600;padding:.2em 0}table.sortable th{cursor:pointer}table.sortable th a{color:#1a56b0}tr.ref th,tr.ref td{font-style:italic;background:#fbf7e9}
td{white-space:nowrap}td.l{white-space:normal}th{overflow-wrap:normal;word-break:normal}thead th{vertical-align:bottom}
.scroll tbody th.l{position:sticky;left:0;z-index:1;background:#f4f4f4;min-width:8em;max-width:16em}.scroll thead th.l:first-child{position:sticky;left:0;z-index:2}
table.board{min-width:100%}table.board th{font-size:.9em;min-width:4.5em}table.board th.l{text-align:left}table.board tr.ref th.l{background:#fbf7e9}
td .se,td .cell{color:#777;font-size:.85em}td .cell{display:block;white-space:normal;min-width:9em}td.why{color:#a33;font-size:.85em}
p.verdict{font-size:1.05em;margin:.3em 0}details{margin:.5em 0 1em}details>summary{cursor:pointer;font-weight:600}p.warn{background:#fff4e0;border-left:4px solid #e8a200;padding:.3em .6em}
"""

#: sorts a ``table.sortable`` by the clicked column (cells carry ``data-v``; blanks last); no-op without JS
SORT_SCRIPT = """
document.querySelectorAll('table.sortable').forEach(function(t){t.querySelectorAll('thead th').forEach(function(th,k){
th.title=(th.title?th.title+' (click to sort)':'click to sort');th.addEventListener('click',function(e){if(e.target.tagName==='A')return;var b=t.tBodies[0],
rows=Array.prototype.slice.call(b.rows),d=th.dataset.dir==='desc'?'asc':'desc';th.dataset.dir=d;
function key(r){var c=r.cells[k];var v=c.dataset.v;if(v===undefined)return c.textContent;var f=parseFloat(v);return isNaN(f)?null:f}
rows.sort(function(x,y){var a=key(x),z=key(y);if(a===null)return 1;if(z===null)return -1;if(a<z)return d==='asc'?-1:1;if(a>z)return d==='asc'?1:-1;return 0});
rows.forEach(function(r){b.appendChild(r)})})})});
"""


@dataclass
class Text:
    text: str
    note: bool = False
    warn: bool = False  # a caveat the reader must see (sample size, missing models)
    skip: bool = False  # "this cannot be computed here": a section of only such lines is listed as skipped
    verdict: bool = False  # a one-line verdict at the top of the report


@dataclass
class Items:
    """A bulleted list (``<ul>``) of plain lines."""

    lines: list[str]


@dataclass
class Table:
    frame: pd.DataFrame
    caption: str = ""
    digits: int = 3


@dataclass
class Image:
    path: Path
    alt: str = ""


@dataclass
class Leaderboard:
    """A sortable model x benchmark table: value with its standard error per cell, benchmark headers
    linked (``links``: column -> relative URL), ``reference`` rows (chance levels) set apart.
    ``notes`` (model, column) -> a second line in the cell (n, parse share, ...); ``why`` (model, column)
    -> the text shown instead of a blank when the value is undefined ("unparsed", "undefined: no item scored")."""

    values: pd.DataFrame
    errors: pd.DataFrame
    links: dict[str, str] = field(default_factory=dict)
    reference: list[str] = field(default_factory=list)
    caption: str = ""
    digits: int = 3
    notes: dict[tuple[str, str], str] = field(default_factory=dict)
    why: dict[tuple[str, str], str] = field(default_factory=dict)  # the text shown instead of the value
    headers: dict[str, str] = field(default_factory=dict)  # column -> a shorter header (the full name is its title)


Block = Text | Table | Image | Leaderboard | Items


@dataclass
class Section:
    title: str
    blocks: list[Block] = field(default_factory=list)
    folded: bool = False  # shown closed (``<details>``): long reference tables


#: control characters (C0 but tab/newline/CR, DEL, C1): shown as a visible ``<U+XXXX>``, so a reply cannot hide
#: text or ring a terminal bell on the page (bidirectional text is isolated by the page: ``dir=auto``, ``<bdi>``)
_INVISIBLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def esc(value: Any) -> str:
    """``value`` as HTML text: lone surrogates replaced (:func:`plumbing.jsonio.clean_text`), control characters
    made visible as ``<U+XXXX>``."""
    text = _INVISIBLE.sub(lambda m: f"<U+{ord(m.group()):04X}>", clean_text(str(value))[0])
    return html.escape(text, quote=True)


#: characters that must not appear raw inside ``<script>``: a ``</script>`` or ``<!--`` in model text would
#: end or bend the element, and U+2028/U+2029 end a line in older JavaScript
SCRIPT_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
SCRIPT_TABLE = str.maketrans(SCRIPT_ESCAPES)


def script_json(value: Any) -> str:
    """JSON safe to embed inside ``<script type="application/json">``: ``<``, ``>``, ``&``, U+2028/9 as ``\\uXXXX``."""
    return dumps(_finite(value), allow_nan=False).translate(SCRIPT_TABLE)


def _finite(value: Any) -> Any:
    """``value`` with NaN and +-Infinity (not JSON; a hostile or broken record may hold them) as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        return f"{value:.{digits}f}"
    return str(value)


#: columns that hold counts: whole numbers shown without decimals ("games 1", not "1.000")
COUNT_COLUMNS = frozenset({"n", "games", "episodes", "items", "models", "models used", "files", "rows", "instances", "configs", "count"})


def is_count(column: Any, value: Any) -> bool:
    """A whole number in a column of counts (any level of a tuple column: ``('count', 'GPT-4o')``)."""
    names = [str(c).lower() for c in (column if isinstance(column, tuple) else (column,))]
    counting = any(n in COUNT_COLUMNS or n.startswith("n_") or n.endswith(("_count", " count")) for n in names)
    return counting and isinstance(value, float) and math.isfinite(value) and value.is_integer()


#: a cell that is text but reads as a number or a range ("2.2e-05", "1-2", "45%"): right-aligned, never wrapped
NUMBER_TEXT = re.compile(r"[-+]?\d[\d.,]*(?:[eE][-+]?\d+)?%?(?:-\d[\d.,]*)?")


def label(value: Any) -> str:
    """A header or row name as text: a pandas tuple (MultiIndex) joined with " · ", never shown as ``('a', 'b')``."""
    if isinstance(value, tuple):
        return " · ".join(str(v) for v in value if str(v) != "")
    return str(value)


def breakable(text: str) -> str:
    """``text`` as HTML that a narrow column breaks after ``_`` and ``/`` (and at spaces), never inside a word."""
    return esc(text).replace("_", "_<wbr>").replace("/", "/<wbr>")


def note_html(note: str) -> str:
    """A cell's second line (n, interval, parse share), breaking at spaces only (never inside a number)."""
    return f"<span class='cell'>{esc(note)}</span>" if note else ""


def render_table(table: Table) -> str:
    frame = table.frame
    index_name = label(tuple(n for n in frame.index.names if n)) if frame.index.nlevels > 1 else label(frame.index.name or "")
    head = f"<th class='l'>{breakable(index_name)}</th>" + "".join(
        f"<th title='{esc(label(c))}'>{breakable(label(c))}</th>" for c in frame.columns
    )
    rows = []
    for idx, row in frame.iterrows():
        cells = "".join(
            f"<td{' class=l' if isinstance(v, str) and not NUMBER_TEXT.fullmatch(v) else ''}>{esc(fmt(v, 0 if is_count(c, v) else table.digits))}</td>"
            for c, v in zip(frame.columns, row.tolist())
        )
        rows.append(f"<tr><th class='l'>{breakable(label(idx))}</th>{cells}</tr>")
    caption = f"<caption>{esc(table.caption)}</caption>" if table.caption else ""
    return f"<div class='scroll'><table>{caption}<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"


def render_image(image: Image) -> str:
    data = base64.b64encode(Path(image.path).read_bytes()).decode("ascii")
    return f"<img alt='{esc(image.alt)}' src='data:image/png;base64,{data}'>"


def render_leaderboard(board: Leaderboard) -> str:
    values, errors = board.values, board.errors
    heads = [f"<th class='l'>{esc(values.index.name or 'model')}</th>"]
    for col in values.columns:
        shown = breakable(board.headers.get(col, str(col)))
        name = f"<a href='{esc(board.links[col])}'>{shown}</a>" if col in board.links else shown
        heads.append(f"<th title='{esc(col)}'>{name}</th>")
    rows = []
    for model in values.index:
        cells = []
        for col in values.columns:
            v = values.at[model, col]
            se = errors.at[model, col] if col in errors.columns and model in errors.index else math.nan
            note = board.notes.get((model, col), "")
            if v is None or (isinstance(v, float) and math.isnan(v)):
                why = board.why.get((model, col), "")
                cells.append(f"<td data-v='' class='why'>{esc(why)}{note_html(note)}</td>" if why else "<td data-v=''></td>")
                continue
            err = "" if se is None or math.isnan(float(se)) else f" <span class='se'>&plusmn; {esc(fmt(float(se), board.digits))}</span>"
            cells.append(f"<td data-v='{float(v)!r}'>{esc(fmt(float(v), board.digits))}{err}{note_html(note)}</td>")
        cls = " class='ref'" if model in board.reference else ""
        rows.append(f"<tr{cls}><th class='l'>{breakable(model)}</th>{''.join(cells)}</tr>")
    caption = f"<caption>{esc(board.caption)}</caption>" if board.caption else ""
    return (
        f"<div class='scroll'><table class='sortable board'>{caption}<thead><tr>{''.join(heads)}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def render_block(block: Block) -> str:
    if isinstance(block, Text):
        cls = " class='verdict'" if block.verdict else " class='warn'" if block.warn else " class=note" if block.note else ""
        return f"<p{cls}>{esc(block.text)}</p>"
    if isinstance(block, Items):
        return "<ul>" + "".join(f"<li>{esc(line)}</li>" for line in block.lines) + "</ul>"
    if isinstance(block, Leaderboard):
        return render_leaderboard(block)
    if isinstance(block, Table):
        return render_table(block)
    if isinstance(block, Image):
        return render_image(block)
    raise TypeError(f"unknown block {type(block).__name__}")


def render_section(i: int, section: Section) -> str:
    """``<h2>`` and its blocks; a folded section's blocks sit in a closed ``<details>``."""
    blocks = "".join(render_block(b) for b in section.blocks)
    if section.folded:
        blocks = f"<details><summary>show ({len(section.blocks)} blocks)</summary>{blocks}</details>"
    return f"<h2 id='s{i}'>{esc(section.title)}</h2>{blocks}"


def render_page(title: str, sections: list[Section]) -> str:
    toc = "".join(f"<li><a href='#s{i}'>{esc(s.title)}</a></li>" for i, s in enumerate(sections))
    body = "".join(render_section(i, s) for i, s in enumerate(sections))
    sortable = any(isinstance(b, Leaderboard) for s in sections for b in s.blocks)
    script = f"<script>{SORT_SCRIPT}</script>" if sortable else ""
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{esc(title)}</title><style>{CSS}</style></head><body>"
        f"<h1>{esc(title)}</h1><ul>{toc}</ul>{body}{script}</body></html>"
    )
