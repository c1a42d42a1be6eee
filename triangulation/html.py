"""The single self-contained HTML page: inline CSS, figures embedded as base64 PNG, no scripts.

Every string that comes from results (model names, task names, topics, model outputs) goes through
:func:`html.escape`; the page is assembled only from the fixed markup in this module.
"""

from __future__ import annotations

import base64
import html
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2em auto;max-width:1200px;color:#222;padding:0 1em}
h1{font-size:1.6em}h2{font-size:1.3em;border-bottom:1px solid #ccc;margin-top:2em}h3{font-size:1.05em}
table{border-collapse:collapse;margin:.5em 0 1em;font-size:.85em}th,td{border:1px solid #ddd;padding:3px 7px;text-align:right}
th{background:#f4f4f4}td.l,th.l{text-align:left}img{max-width:100%;border:1px solid #eee;margin:.5em 0}
p.note{color:#555;font-size:.9em}.scroll{overflow-x:auto}
"""


@dataclass
class Text:
    text: str
    note: bool = False


@dataclass
class Table:
    frame: pd.DataFrame
    caption: str = ""
    digits: int = 3


@dataclass
class Image:
    path: Path
    alt: str = ""


Block = Text | Table | Image


@dataclass
class Section:
    title: str
    blocks: list[Block] = field(default_factory=list)


def esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


#: characters that must not appear raw inside ``<script>``: a ``</script>`` or ``<!--`` in model text would
#: end or bend the element, and U+2028/U+2029 end a line in older JavaScript
SCRIPT_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
SCRIPT_TABLE = str.maketrans(SCRIPT_ESCAPES)


def script_json(value: Any) -> str:
    """JSON safe to embed inside ``<script type="application/json">``: ``<``, ``>``, ``&``, U+2028/9 as ``\\uXXXX``."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False).translate(SCRIPT_TABLE)


def fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        return f"{value:.{digits}f}"
    return str(value)


def render_table(table: Table) -> str:
    frame = table.frame
    head = f"<th class='l'>{esc(frame.index.name or '')}</th>" + "".join(f"<th>{esc(c)}</th>" for c in frame.columns)
    rows = []
    for idx, row in frame.iterrows():
        cells = "".join(
            f"<td{' class=l' if isinstance(v, str) else ''}>{esc(fmt(v, table.digits))}</td>" for v in row.tolist()
        )
        rows.append(f"<tr><th class='l'>{esc(idx)}</th>{cells}</tr>")
    caption = f"<caption>{esc(table.caption)}</caption>" if table.caption else ""
    return f"<div class='scroll'><table>{caption}<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"


def render_image(image: Image) -> str:
    data = base64.b64encode(Path(image.path).read_bytes()).decode("ascii")
    return f"<img alt='{esc(image.alt)}' src='data:image/png;base64,{data}'>"


def render_block(block: Block) -> str:
    if isinstance(block, Text):
        return f"<p{' class=note' if block.note else ''}>{esc(block.text)}</p>"
    if isinstance(block, Table):
        return render_table(block)
    if isinstance(block, Image):
        return render_image(block)
    raise TypeError(f"unknown block {type(block).__name__}")


def render_page(title: str, sections: list[Section]) -> str:
    toc = "".join(f"<li><a href='#s{i}'>{esc(s.title)}</a></li>" for i, s in enumerate(sections))
    body = "".join(
        f"<h2 id='s{i}'>{esc(s.title)}</h2>" + "".join(render_block(b) for b in s.blocks) for i, s in enumerate(sections)
    )
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{esc(title)}</title><style>{CSS}</style></head><body>"
        f"<h1>{esc(title)}</h1><ul>{toc}</ul>{body}</body></html>"
    )
