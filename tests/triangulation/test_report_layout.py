"""The report's tables and figures at a reader's width (issue 43 item 6), the parts that need no browser: no raw
pandas tuple as a header or a row name, counts as whole numbers, headers that break only at ``_``, ``/`` or
spaces, numbers that never wrap, and bar-chart labels that are wrapped, never cut. The browser measures the
whole page in ``test_report_browser.py``."""

from __future__ import annotations

import pandas as pd

from triangulation.html import Table, render_table
from triangulation.report import plots


def test_tuple_headers_and_rows_are_joined_and_counts_are_whole_numbers():
    frame = pd.DataFrame(
        {("percent", "Claude 3.5 Sonnet"): [44.306], ("count", "Claude 3.5 Sonnet"): [463.0]},
        index=pd.MultiIndex.from_tuples([("C3", "SmolLM2-135M-Instruct-Q4_1")], names=["setting", "model"]),
    )
    html = render_table(Table(frame, "Figure 7"))
    assert "(&#x27;" not in html and "('" not in html
    assert "percent · Claude 3.5 Sonnet" in html and "C3 · SmolLM2-135M-Instruct-Q4_<wbr>1" in html
    assert ">463<" in html and "463.000" not in html and ">44.306<" in html


def test_headers_break_at_underscores_and_numbers_do_not_wrap():
    html = render_table(Table(pd.DataFrame({"lm_pragmatics_indirect_speech": [0.5]}, index=pd.Index(["m"], name="model"))))
    assert "lm_<wbr>pragmatics_<wbr>indirect_<wbr>speech" in html
    from triangulation.html import CSS

    assert "td{white-space:nowrap}" in CSS and "overflow-wrap:break-word" not in CSS
    text_numbers = render_table(Table(pd.DataFrame({"p": ["2.2e-05"], "items": ["1-2"], "why": ["n too small"]}, index=["m"])))
    assert "<td>2.2e-05</td><td>1-2</td><td class=l>n too small</td>" in text_numbers  # numbers as text do not wrap either


def test_bar_labels_are_wrapped_not_cut(tmp_path, monkeypatch):
    seen = {}
    save = plots._save

    def measured(fig, path):
        fig.tight_layout()  # as _save lays it out, before it closes the figure
        renderer = fig.canvas.get_renderer()
        ticks = fig.axes[0].get_xticklabels()
        seen.update(texts=[t.get_text() for t in ticks], boxes=[t.get_window_extent(renderer) for t in ticks], frame=fig.bbox)
        return save(fig, path)

    monkeypatch.setattr(plots, "_save", measured)
    labels = ["multiword expressions", "phonology/orthography/morphology", "word meaning + word form", "semantic relations"]
    table = pd.DataFrame({"Claude 3.5 Sonnet": [13.7, 15.9, 9.8, 44.3], "GPT-4o": [1.8, 15.9, 5.5, 39.9]}, index=labels)
    plots.grouped_bars(table, tmp_path / "fig7.png", "Seed 001 Figure 7", "% correct")
    assert [s.replace("\n", " ").replace("/ ", "/") for s in seen["texts"]] == labels  # every word there, none cut with "…"
    frame = seen["frame"]
    for text, box in zip(seen["texts"], seen["boxes"]):
        assert box.x0 >= frame.x0 and box.x1 <= frame.x1 and box.y0 >= frame.y0, text  # inside the saved figure
    for a, b in zip(seen["boxes"], seen["boxes"][1:]):
        assert not a.overlaps(b)
