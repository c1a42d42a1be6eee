"""Seed 002 Table 2 (the reference game per language, delta to English) from fake ``triangulate play`` results.

The fake values are the paper's own Table 2 entries for GPT-4 and Llama-3-8b (a subset of languages);
the expected deltas are the paper's bracketed numbers, which are value - English."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from tests.triangulation.test_report_fakes import clem, run_report, write_play_run
from triangulation.report.analyses.clembench import multilingual_table, paper_cells
from triangulation.runs.results_io import read_run

# Table 2 (seed 002): (% played, quality) per language
GPT4 = {"en": (100.0, 87.22), "de": (100.0, 85.56), "te": (99.44, 35.2), "zh": (72.78, 88.55)}
LLAMA8B = {"en": (100.0, 47.78), "de": (98.33, 43.5), "tr": (0.0, math.nan)}


def _runs(root):
    paths = []
    for folder, args, table in (("gpt4", "pretrained=openai/gpt-4-turbo", GPT4), ("llama", "pretrained=meta/Llama-3-8b", LLAMA8B)):
        metrics = {f"referencegame_{lang}": clem(p, q) for lang, (p, q) in table.items()}
        paths.append(write_play_run(root, args, metrics, folder=folder))
    return paths


def test_table_2_values_and_deltas_to_english(tmp_path):
    tables = multilingual_table([read_run(p) for p in _runs(tmp_path)])
    assert list(tables["played"].columns) == ["de", "en", "te", "tr", "zh"]
    played, quality = tables["played_delta"], tables["quality_delta"]
    gpt, llama = "openai/gpt-4-turbo", "meta/Llama-3-8b"
    # the paper's brackets: GPT-4 zh 72.78 (-27.22), te 99.44 (-0.56); quality de (-1.66), te (-52.02), zh (1.33)
    assert played.loc[gpt, "zh"] == pytest.approx(-27.22) and played.loc[gpt, "te"] == pytest.approx(-0.56)
    assert quality.loc[gpt, "de"] == pytest.approx(-1.66) and quality.loc[gpt, "te"] == pytest.approx(-52.02)
    assert quality.loc[gpt, "zh"] == pytest.approx(1.33) and quality.loc[gpt, "en"] == 0.0
    # Llama-3-8b: de 98.33 (-1.67), quality 43.5 (-4.28); tr 0.0 (-100.00), quality nan (nan)
    assert played.loc[llama, "de"] == pytest.approx(-1.67) and quality.loc[llama, "de"] == pytest.approx(-4.28)
    assert played.loc[llama, "tr"] == -100.0 and math.isnan(quality.loc[llama, "tr"])
    assert math.isnan(played.loc[llama, "zh"])  # no run for that language
    cells = paper_cells(tables["quality"], tables["quality_delta"])
    assert cells.loc[gpt, "zh"] == "88.55 (1.33)" and cells.loc[llama, "tr"] == "nan (nan)"


def test_table_2_without_english_has_no_deltas(tmp_path):
    path = write_play_run(tmp_path, "pretrained=x/y", {"referencegame_de": clem(100, 50)}, folder="x")
    tables = multilingual_table([read_run(path)])
    assert tables["played"].loc["x/y", "de"] == 100 and math.isnan(tables["played_delta"].loc["x/y", "de"])
    assert multilingual_table([read_run(write_play_run(tmp_path, "pretrained=x/z", {"taboo": clem(1, 2)}, folder="z"))]) == {}


def test_report_shows_table_2(tmp_path):
    _runs(tmp_path / "play")
    out = tmp_path / "report"
    assert run_report([str(tmp_path / "play"), "--out", str(out)]) == 0
    delta = pd.read_csv(out / "clembench_multilingual_played_delta.csv", index_col=0)
    assert delta.loc["openai/gpt-4-turbo", "zh"] == pytest.approx(-27.22)
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "seed 002 Table 2" in html and "72.78 (-27.22)" in html and "88.55 (1.33)" in html
