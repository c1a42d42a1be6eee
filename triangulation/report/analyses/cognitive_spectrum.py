"""Seed 003 Figure 6, "Cognitive Abilities Spectrum of LLMs" (App. I: "Figure 6 presents a direct comparison of
models based on our selected cognitive tests"), from our runs.

Per model, one score per cognitive ability of Tables 1-2 that a test of the abilities file measured here, in the
tables' order (executive functions, then socio-emotional skills): the ability's test on 0-100 by its metric's
known range (:func:`triangulation.report.discriminative.scale_scores`; WM = Verbal N-3 accuracy, cognitive
flexibility = the WCST/LNT mean, App. E.2.1). An ability measured by several benchmarks is their plain mean
through the report's one pooling rule (:func:`triangulation.report.abilities.pooled`: a group stands for its
members). Drawn as the paper's figure compares them: the abilities along the axis, one bar per model. The
published figure is an image whose values the paper does not print, so nothing here is checked against it.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from plumbing.csvio import write_csv
from triangulation.html import Image, Section, Table, Text
from triangulation.report import plots
from triangulation.report.abilities import Taxonomy, ability_benchmarks, pooled
from triangulation.report.context import ReportContext, Skipped
from triangulation.report.discriminative import scale_scores

TITLE = "Cognitive abilities spectrum (seed 003, Figure 6)"


def spectrum_table(scores: pd.DataFrame, taxonomy: Taxonomy, groups: Mapping[str, list[str]] | None) -> pd.DataFrame:
    """Ability (display name, Tables 1-2 order) x model, 0-100; abilities no model was tested on are left out."""
    by_ability = ability_benchmarks(scores, taxonomy, groups)
    scaled = scale_scores(scores)
    columns = {taxonomy.ability_name(a): pooled(scaled, by_ability[a], groups, how="mean") for a in taxonomy.abilities if a in by_ability}
    table = pd.DataFrame(columns, index=scores.index).T.dropna(how="all")
    table.index.name = "ability"
    return table.dropna(axis=1, how="all")


def build(ctx: ReportContext) -> list[Section | Skipped]:
    table = spectrum_table(ctx.models, ctx.taxonomy, ctx.groups)
    if table.empty:
        return [Skipped(TITLE, "no model has a score on a cognitive test of the abilities file")]
    write_csv(table, ctx.out / "triangulating_fig6_spectrum.csv")
    tests = ability_benchmarks(ctx.models, ctx.taxonomy, ctx.groups)
    note = "Tests: " + "; ".join(f"{ctx.taxonomy.ability_name(a)}: {', '.join(b)}" for a, b in tests.items()) + ". Scores on 0-100."
    image = plots.grouped_bars(
        table, ctx.out / "triangulating_fig6_spectrum.png", "Cognitive abilities spectrum (seed 003 Fig. 6)", "score (%)"
    )
    return [Section(TITLE, [Text(note, note=True), Table(table, "ability x model (0-100)"), Image(image, "Figure 6")])]
