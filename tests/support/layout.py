"""What a reader's browser draws, measured in the DOM (issue 43 item 6): numbers split across lines, headers
broken inside a word, raw pandas tuples, counts with decimals, row names that do not stay put when a table
scrolls, and a page wider than the window. Used with :func:`tests.support.browser.page_text`."""

from __future__ import annotations

import json

from tests.support.browser import page_text

#: one JSON string: every folded section opened first, then the problems found (empty lists: none)
MEASURE = r"""(() => {
if (document.readyState !== 'complete' || location.protocol === 'about:') return '';
document.querySelectorAll('details').forEach(d => { d.open = true; });
const out = {view: innerWidth, page: document.documentElement.scrollWidth, tables: document.querySelectorAll('table').length,
  wrapped: [], midword: [], tuples: [], counts: [], unsticky: []};
const texts = (el) => { const w = document.createTreeWalker(el, NodeFilter.SHOW_TEXT); const all = []; let n; while ((n = w.nextNode())) all.push(n); return all; };
const rects = (node, a, b) => { const r = document.createRange(); r.setStart(node, a); r.setEnd(node, b); return [...r.getClientRects()].filter(x => x.width > 0); };
document.querySelectorAll('td').forEach(td => texts(td).forEach(node => {
  const re = /[-+]?\d[\d.,]*\d%?|\d/g; let m;
  while ((m = re.exec(node.textContent))) {
    const tops = new Set(rects(node, m.index, m.index + m[0].length).map(x => Math.round(x.top)));
    if (tops.size > 1) out.wrapped.push(td.textContent);
  }
}));
document.querySelectorAll('th').forEach(th => {
  const chars = [];  // [character, its top, the character before it (a collapsed space at a line end has no box)]
  let before = ' ';
  texts(th).forEach(node => { for (let i = 0; i < node.textContent.length; i++) {
    const r = rects(node, i, i + 1)[0]; const c = node.textContent[i];
    if (r) chars.push([c, r.top, before]);
    before = c;
  } });
  for (let i = 1; i < chars.length; i++) {
    const [c, top, prev] = chars[i];
    if (top > chars[i - 1][1] + 2 && !'_/ -·('.includes(prev) && !' )'.includes(c)) { out.midword.push(th.textContent); break; }
  }
});
document.querySelectorAll('th, td').forEach(c => { if (/\('[^']*', /.test(c.textContent)) out.tuples.push(c.textContent); });
document.querySelectorAll('table').forEach(t => {
  const heads = [...t.querySelectorAll('thead th')].map(th => th.textContent.trim());
  t.querySelectorAll('tbody tr').forEach(tr => [...tr.children].forEach((c, k) => {
    if (/(^|\W)(count|n|games|items|episodes|models)(\W|$)/i.test(heads[k] || '') && /^\d+\.\d+$/.test(c.textContent.trim())) out.counts.push(heads[k] + ': ' + c.textContent);
  }));
});
document.querySelectorAll('.scroll tbody tr > th:first-child').forEach(th => { if (getComputedStyle(th).position !== 'sticky') out.unsticky.push(th.textContent); });
return JSON.stringify(out);
})()"""


def measure(page, width: int) -> dict:
    """The problems :data:`MEASURE` finds on ``page`` (a path) in a window ``width`` px wide."""
    seen = page_text(page.resolve().as_uri(), until="{", expression=MEASURE, window_size=f"{width},900")
    return json.loads(seen)
