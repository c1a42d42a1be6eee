"""The episode viewer: one self-contained, offline HTML page per task, plus ``index.html``.

Each page lists the task's episodes (id, model, outcome, score, failed) as ``<details>`` elements that
open into the conversation (:mod:`triangulation.viewer.episodes`): the roles as coloured bubbles, each reply
with our parsed reading and verdict, the stimuli / gold above, and the scores with why. With
JavaScript off the page is that plain list; with it on, a small script filters, sorts and pages the
list (50 at a time, the rest detached from the DOM); a task's episodes are split into files of
:data:`EPISODES_PER_FILE`, linked to each other, so a 10,000-episode task opens in seconds.
Every model-written string goes through :func:`triangulation.html.esc`; the episode index the script
reads is JSON escaped for ``<script>`` (:func:`triangulation.html.script_json`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from tqdm.auto import tqdm

from models.naming import unique_report_ids
from models.ref import ModelRef
from multiturn.api import TurnView
from plumbing import run_folder
from plumbing.atomic import write_files
from plumbing.errors import UserError
from plumbing.jsonio import Records
from plumbing.run_folder import ResultsFile
from triangulation.html import esc, script_json
from triangulation.runs.results_io import RecordFile, read_records, say_renamed
from triangulation.viewer.episodes import ROLE_LABELS, Episode, episodes_by_task
from triangulation.viewer.episodes import file_episodes as file_episodes  # export's reader of one file

PAGE_SIZE = 50
#: episodes per HTML file: a task with more gets ``<task>-2.html``, ``<task>-3.html`` ... (each file stays a few
#: MB, so a browser parses it in seconds; one 10,000-episode file took a minute: benchmarks/viewer_10k.py)
EPISODES_PER_FILE = 1000
#: a message longer than this opens folded (its first line shown)
FOLD_CHARS = 1200

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI","Noto Sans","Noto Sans CJK SC","Noto Sans CJK JP",sans-serif;margin:1.5em auto;max-width:1100px;color:#222;padding:0 1em}
h1{font-size:1.4em}a{color:#1a56b0}table{border-collapse:collapse;font-size:.9em}th,td{border:1px solid #ddd;padding:3px 8px;text-align:left}
#controls{display:flex;flex-wrap:wrap;gap:.6em;align-items:center;margin:.8em 0;padding:.5em;background:#f6f6f6;border-radius:6px}
#eps{list-style:none;padding:0}#eps>li{border:1px solid #ddd;border-radius:6px;margin:.3em 0}
#eps summary{cursor:pointer;padding:.35em .6em;display:flex;gap:1em;flex-wrap:wrap}
#eps summary .id{font-family:monospace;min-width:16em}.tag{border-radius:4px;padding:0 .4em;font-size:.85em;background:#eee}
.tag.failed{background:#f8d7da}.tag.good{background:#d4edda}.tag.bad{background:#fde2c8}
.body{padding:.4em .8em;border-top:1px solid #eee}.facts td:first-child{font-weight:600}.facts td{white-space:pre-wrap}
.conv{display:flex;flex-direction:column}.turn{max-width:78%;border-radius:10px;padding:.35em .7em;margin:.25em 0;border:1px solid #ddd}
.turn .who{font-size:.75em;color:#555;font-weight:600}.turn pre{white-space:pre-wrap;word-break:break-word;margin:.2em 0;font-family:inherit}
.gm{align-self:center;background:#f3f3f3;max-width:90%}.player{align-self:flex-start;background:#e8f0fe}
.player_b{align-self:flex-end;background:#e6f4ea}.judge{align-self:flex-end;background:#fff4e0}
.note{font-size:.8em;color:#333;background:#fffbe6;border-left:3px solid #e0c200;padding:0 .4em;margin:.15em 0}
.ok{color:#16803c;font-weight:700}.no{color:#b3261e;font-weight:700}
.grid{display:flex;gap:3px;margin:.3em 0}.tile{width:1.8em;height:1.8em;display:flex;align-items:center;justify-content:center;font-weight:700;color:#fff;text-transform:uppercase;border-radius:3px}
.tile.green{background:#538d4e}.tile.yellow{background:#b59f3b}.tile.red{background:#787c7e}
.why{font-style:italic}.facts caption{text-align:left;font-weight:600;font-size:.85em;color:#555}
"""

SCRIPT = """
(function(){
var idx=JSON.parse(document.getElementById('ep-index').textContent);
var list=document.getElementById('eps');var items=Array.prototype.slice.call(list.children);
var c=document.getElementById('controls');c.hidden=false;
var q=document.getElementById('q'),oc=document.getElementById('outcome'),md=document.getElementById('model'),
fl=document.getElementById('failed'),so=document.getElementById('sort'),pos=document.getElementById('pos');
var page=0,rows=[];
function fill(sel,key){var seen={};idx.forEach(function(r){seen[r[key]]=1});Object.keys(seen).sort().forEach(function(v){var o=document.createElement('option');o.value=v;o.textContent=v;sel.appendChild(o)})}
fill(oc,'outcome');fill(md,'model');
function num(v){return v===null?-Infinity:v}
function apply(reset){if(reset)page=0;var text=q.value.toLowerCase();
rows=idx.filter(function(r){return (!text||(r.id+' '+r.model+' '+r.outcome).toLowerCase().indexOf(text)>=0)&&(!oc.value||r.outcome===oc.value)&&(!md.value||r.model===md.value)&&(!fl.checked||r.failed)});
var s=so.value;rows.sort(function(a,b){if(s==='score_desc')return num(b.score)-num(a.score);if(s==='score_asc')return num(a.score)-num(b.score);
var k=s==='outcome'?'outcome':s==='model'?'model':'i';return a[k]<b[k]?-1:a[k]>b[k]?1:a.i-b.i});
var pages=Math.max(1,Math.ceil(rows.length/PAGE));if(page>=pages)page=pages-1;
var frag=document.createDocumentFragment();rows.slice(page*PAGE,(page+1)*PAGE).forEach(function(r){frag.appendChild(items[r.i])});
while(list.firstChild)list.removeChild(list.firstChild);list.appendChild(frag);
pos.textContent=rows.length+' of '+idx.length+' episodes, page '+(page+1)+' of '+pages}
[q,oc,md,fl,so].forEach(function(e){e.addEventListener('input',function(){apply(true)})});
document.getElementById('prev').addEventListener('click',function(){if(page>0){page--;apply(false)}});
document.getElementById('next').addEventListener('click',function(){page++;apply(false)});
var hash=location.hash.slice(1);apply(true);
if(hash){var hit=-1;rows.forEach(function(r,k){if(items[r.i].id===hash)hit=k});if(hit>=0){page=Math.floor(hit/PAGE);apply(false);var el=document.getElementById(hash);el.querySelector('details').open=true;el.scrollIntoView()}}
})();
"""


def page_name(task: str, part: int = 1) -> str:
    """The task page's file name (``<task>.html``, then ``<task>-<part>.html``; other characters replaced)."""
    stem = re.sub(r"[^A-Za-z0-9_.-]", "_", task)
    if stem.lower() == "index" or stem.startswith("."):  # never the viewer's own index.html, never hidden
        stem = f"task_{stem}"
    return f"{stem}.html" if part == 1 else f"{stem}-{part}.html"


def model_names(newest: Mapping[Path, ResultsFile | None]) -> dict[Path, str]:
    """The model each results folder holds, from its newest results JSON's config (else the folder's name),
    unique over the folders (:func:`models.naming.unique_report_ids` of each one's :class:`~models.ref.ModelRef`; a
    renaming is said once on stderr)."""
    refs: dict[Path, ModelRef] = {}
    out: dict[Path, str] = {}
    for folder, stored in newest.items():
        try:
            refs[folder] = ModelRef.stored(stored.config if stored else {})
        except UserError:  # a results file that does not name its model: fall back to the folder name
            out[folder] = folder.name
    names, notes = unique_report_ids(list(refs.values()))
    say_renamed(notes)
    return {**out, **dict(zip(refs, names))}


def find_episode_files(roots: Iterable[Path]) -> list[RecordFile]:
    """Every play episodes file and the latest lm-eval samples file of each model and task under ``roots``
    (:func:`plumbing.run_folder.record_files`), each read once, as each folder's results files."""
    found = run_folder.record_files(roots)
    stored = {
        folder: list(run_folder.newest_first(folder.glob(run_folder.RESULTS_GLOB)))
        for folder in dict.fromkeys(p.parent for _, _, p in found)
    }
    return record_files(found, stored, {path: read_records(path, kind) for _, kind, path in found})


def record_files(
    found: list[tuple[str, str, Path]], stored: Mapping[Path, list[ResultsFile]], records: Mapping[Path, Records]
) -> list[RecordFile]:
    """``found`` (``(task, kind, path)``) as :class:`~triangulation.runs.results_io.RecordFile`\\ s, given each folder's
    results files, newest first, and each file's records."""
    models = model_names({folder: files[0] if files else None for folder, files in stored.items()})
    return [
        RecordFile(task, kind, path, models[path.parent], next((f for f in stored[path.parent] if task in f.results), None), records[path])
        for task, kind, path in found
    ]


def load_episodes(roots: Iterable[Path]) -> dict[str, list[Episode]]:
    """task -> episodes of every model under ``roots`` (:func:`find_episode_files`)."""
    return episodes_by_task(find_episode_files(roots))


# --- rendering ---------------------------------------------------------------------------------


def fmt_score(value: float) -> str:
    """A score to 3 decimals; "n/a" for an undefined one (None, NaN), never a blank."""
    return "n/a" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.3f}"


def render_text(text: str) -> str:
    if len(text) <= FOLD_CHARS:
        return f"<pre dir='auto'>{esc(text)}</pre>"
    head = text.strip().splitlines()[0][:160] if text.strip() else ""
    return (
        f"<details><summary><bdi>{esc(head)}</bdi> &hellip; ({len(text)} characters)</summary><pre dir='auto'>{esc(text)}</pre></details>"
    )


def render_turn(turn: TurnView) -> str:
    """One message: who to whom, verdict mark, the text, feedback tiles, our reading and why (all escaped;
    model text is isolated with ``<bdi>`` / ``dir=auto`` so right-to-left text cannot reorder the page)."""
    mark = "" if turn.verdict is None else ("<span class='ok'> &#10003;</span>" if turn.verdict else "<span class='no'> &#10007;</span>")
    to = f" &rarr; {esc(turn.to)}" if turn.to else ""
    grid = ""
    if turn.tiles:
        tiles = "".join(f"<span class='tile {esc(colour)}'>{esc(letter)}</span>" for letter, colour in turn.tiles)
        grid = f"<div class='grid' title='feedback'>{tiles}</div>"
    notes = ""
    said_unparsed = turn.why.lower().startswith("unparsed")  # the game's reason already says it: once per turn
    if turn.role != "gm":
        unparsed = turn.reading is None and turn.verdict is False and not said_unparsed
        reading = f"read as: <bdi>{esc(turn.reading)}</bdi>" if turn.reading is not None else "unparsed" if unparsed else ""
        notes += f"<div class='note reading'>{reading}</div>" if reading else ""
    if turn.why:
        notes += f"<div class='note why-turn'><bdi>{esc(turn.why)}</bdi></div>"
    label = ROLE_LABELS.get(turn.role, turn.role)
    return f"<div class='turn {esc(turn.role)}'><div class='who'>{esc(label)}{to}{mark}</div>{render_text(turn.text)}{grid}{notes}</div>"


def render_episode(i: int, ep: Episode) -> str:
    tags = [f"<span class='tag{' failed' if ep.failed else ''}'>{esc(ep.outcome)}</span>"]
    if ep.failed:
        tags.append("<span class='tag failed'>failed</span>")
    summary = (
        f"<summary><span class='id'>{esc(ep.id)}</span><span>{esc(ep.model)}</span>{''.join(tags)}"
        f"<span>score {esc(fmt_score(ep.score))}</span></summary>"
    )
    facts = ""
    if ep.facts:
        caption = f"<caption>{esc(ep.facts_title)}</caption>" if ep.facts_title else ""
        facts = (
            f"<table class='facts'>{caption}" + "".join(f"<tr><td>{esc(k)}</td><td>{esc(v)}</td></tr>" for k, v in ep.facts) + "</table>"
        )
    scores = ", ".join(f"{esc(k)} = {esc(fmt_score(v) if isinstance(v, float) or v is None else v)}" for k, v in ep.scores.items())
    body = (
        f"<div class='body'>{facts}<div class='conv'>{''.join(render_turn(t) for t in ep.turns)}</div>"
        f"<p><b>Scored:</b> {scores or 'nothing'}</p><p class='why'>{esc(ep.why)}</p></div>"
    )
    return f"<li id='ep{i}'><details{' open' if i == 0 else ''}>{summary}{body}</details></li>"  # the first one open: a page shows a conversation


def episode_index(episodes: list[Episode]) -> list[dict]:
    return [
        {
            "i": i,
            "id": ep.id,
            "model": ep.model,
            "outcome": ep.outcome,
            "failed": ep.failed,
            "score": None if math.isnan(ep.score) else ep.score,
        }
        for i, ep in enumerate(episodes)
    ]


def part_nav(task: str, part: int, parts: int, total: int) -> str:
    """Links to the task's other files when it has more than one (plain links: work without JavaScript)."""
    if parts == 1:
        return ""
    links = []
    for k in range(1, parts + 1):
        first, last = (k - 1) * EPISODES_PER_FILE + 1, min(k * EPISODES_PER_FILE, total)
        label = f"{first}-{last}"
        links.append(f"<b>{label}</b>" if k == part else f"<a href='{esc(page_name(task, k))}'>{label}</a>")
    return f"<p>Episodes {' &middot; '.join(links)} of {total} ({EPISODES_PER_FILE} per file)</p>"


def report_link(report: str | None) -> str:
    return f" &middot; <a href='{esc(report)}'>the report</a>" if report else ""


def render_task_page(task: str, episodes: list[Episode], back: str = "index.html", nav: str = "", report: str | None = None) -> str:
    models = sorted({ep.model for ep in episodes})
    failed = sum(ep.failed for ep in episodes)
    controls = (
        "<div id='controls' hidden><input id='q' type='search' placeholder='filter id, model, outcome'>"
        "<select id='outcome'><option value=''>any outcome</option></select>"
        "<select id='model'><option value=''>any model</option></select>"
        "<label><input id='failed' type='checkbox'> failed only</label>"
        "<select id='sort'><option value='i'>file order</option><option value='score_desc'>score, high first</option>"
        "<option value='score_asc'>score, low first</option><option value='outcome'>outcome</option><option value='model'>model</option></select>"
        "<button id='prev' type='button'>&larr;</button><button id='next' type='button'>&rarr;</button><span id='pos'></span></div>"
    )
    items = "".join(render_episode(i, ep) for i, ep in enumerate(episodes))
    script = SCRIPT.replace("PAGE", str(PAGE_SIZE))
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<meta name='viewport' content='width=device-width'><title>{esc(task)} episodes</title><style>{CSS}</style></head><body>"
        f"<p><a href='{esc(back)}'>&larr; all tasks</a>{report_link(report)}</p><h1>{esc(task)}</h1>"
        f"<p>{len(episodes)} episodes, {failed} failed; models: {esc(', '.join(models))}. Open an episode to read it.</p>{nav}"
        f"{controls}<ol id='eps'>{items}</ol>"
        f"<script type='application/json' id='ep-index'>{script_json(episode_index(episodes))}</script>"
        f"<script>{script}</script></body></html>"
    )


def group_anchor(group: str) -> str:
    """The index's anchor of ``group``'s list of task pages (``index.html#group-<group>``)."""
    return "group-" + re.sub(r"[^A-Za-z0-9_.-]", "_", group)


def render_groups(pages: dict[str, tuple[Path, list[Episode]]], groups: dict[str, list[str]]) -> str:
    """One paragraph per group with pages among its members: the group's name (an anchor) and its task pages."""
    out = []
    for group, members in sorted(groups.items()):
        links = [f"<a href='{esc(pages[m][0].name)}'>{esc(m)}</a>" for m in members if m in pages]
        if links:
            out.append(f"<p id='{esc(group_anchor(group))}'><b>{esc(group)}</b> ({len(links)} task pages): {', '.join(links)}</p>")
    return "".join(out)


def render_index(
    pages: dict[str, tuple[Path, list[Episode]]],
    title: str = "episodes",
    report: str | None = None,
    groups: dict[str, list[str]] | None = None,
) -> str:
    rows = []
    for task, (path, eps) in pages.items():
        models = sorted({e.model for e in eps})
        rows.append(
            f"<tr><td><a href='{esc(path.name)}'>{esc(task)}</a></td><td>{len(eps)}</td>"
            f"<td>{sum(e.failed for e in eps)}</td><td>{esc(', '.join(models))}</td></tr>"
        )
    table = (
        "<table><thead><tr><th>task</th><th>episodes</th><th>failed</th><th>models</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
    )
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>{esc(title)}</title><style>{CSS}</style></head><body>"
        + (f"<p><a href='{esc(report)}'>&larr; the report</a></p>" if report else "")
        + f"<h1>{esc(title)}</h1>{render_groups(pages, groups or {})}{table}</body></html>"
    )


def write_viewer(roots: Iterable[Path], out: Path) -> dict[str, Path]:
    """Write ``out/<task>.html`` for every task with episodes or samples under ``roots`` and ``out/index.html``;
    returns task -> page path (empty when nothing was found)."""
    return write_pages(load_episodes(roots), out)


@dataclass(frozen=True)
class PageFiles:
    """A viewer's pages before they are written (:func:`viewer_pages`): each task's page (what a report links to) and
    the files as ``(path, HTML)``, each rendered only as it is written (one page in memory at a time)."""

    pages: dict[str, Path]
    files: Iterator[tuple[Path, str]]


def viewer_pages(
    tasks: dict[str, list[Episode]], out: Path, report: str | None = None, groups: dict[str, list[str]] | None = None
) -> PageFiles:
    """The pages of ``out/<task>.html`` for every task of ``tasks`` (task -> its episodes: :func:`load_episodes`) and
    ``out/index.html`` (each linking back to ``report``, a URL relative to ``out``, when given; the index lists each of
    ``groups``' task pages under the anchor :func:`group_anchor`); none when there is no task."""
    out = Path(out)
    if not tasks:
        return PageFiles({}, iter(()))
    files = ((out / name, html) for name, html in render_pages(tasks, report, groups))
    return PageFiles({task: out / page_name(task) for task in tasks}, files)


def write_pages(
    tasks: dict[str, list[Episode]], out: Path, report: str | None = None, groups: dict[str, list[str]] | None = None
) -> dict[str, Path]:
    """Write the pages of :func:`viewer_pages`; returns task -> page path (empty when there is none)."""
    pages = viewer_pages(tasks, out, report, groups)
    write_files(pages.files)
    return pages.pages


def render_pages(
    tasks: dict[str, list[Episode]], report: str | None = None, groups: dict[str, list[str]] | None = None
) -> Iterator[tuple[str, str]]:
    """The viewer's pages as (file name, HTML), one after another: each task's parts of :data:`EPISODES_PER_FILE`
    episodes, linked to each other, then ``index.html``."""
    for task, episodes in tqdm(tasks.items(), desc="episode pages", unit="task", disable=len(tasks) < 5):
        parts = max(1, -(-len(episodes) // EPISODES_PER_FILE))
        for part in range(1, parts + 1):
            chunk = episodes[(part - 1) * EPISODES_PER_FILE : part * EPISODES_PER_FILE]
            nav = part_nav(task, part, parts, len(episodes))
            yield page_name(task, part), render_task_page(task, chunk, nav=nav, report=report)
    pages = {task: (Path(page_name(task)), episodes) for task, episodes in tasks.items()}
    yield "index.html", render_index(pages, report=report, groups=groups)
