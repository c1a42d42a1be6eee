"""Published reference rows scored by our code (filled in below)."""

from __future__ import annotations

from triangulation.html import Section
from triangulation.report.context import ReportContext, Skipped


def references_section(ctx: ReportContext) -> Section | Skipped:
    return Skipped("Ranked among published models", "no published rows match these runs")
