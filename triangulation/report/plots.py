"""PNG figures of the report (matplotlib, Agg backend: no display needed)."""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.text import Text as MplText  # noqa: E402

DPI = 110
#: CJK-capable families tried after the default (fonts-noto-cjk); only the installed ones are named, so a
#: machine without them draws boxes for CJK glyphs instead of logging a missing-font warning per figure
CJK_FAMILIES = ("Noto Sans CJK SC", "Noto Sans CJK JP", "Noto Serif CJK SC", "WenQuanYi Zen Hei", "Droid Sans Fallback")


def _use_cjk_fonts() -> None:
    from matplotlib import font_manager

    installed = {f.name for f in font_manager.fontManager.ttflist}
    extra = [f for f in CJK_FAMILIES if f in installed]
    if extra:
        matplotlib.rcParams["font.family"] = ["DejaVu Sans", *extra]  # per-glyph fallback in this order


_use_cjk_fonts()


def _save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def _short(label: str, width: int = 28) -> str:
    label = str(label)
    return label if len(label) <= width else label[: width - 1] + "…"


def heatmap(tau: pd.DataFrame, p: pd.DataFrame, path: Path, title: str = "Kendall tau-b (* p < 0.05)") -> Path:
    """Benchmark x benchmark (or any rows x columns) tau heatmap with full labels (the figure grows with the
    longest); cells show tau with * where p < 0.05 (only * beyond 30 benchmarks); blank = undefined (fewer
    than two common models or a constant side)."""
    rows, cols = tau.shape
    k = max(rows, cols)
    label_in = 0.075 * max((len(str(c)) for c in [*tau.columns, *tau.index]), default=0)  # inches of an 8-pt label
    fig, ax = plt.subplots(figsize=(max(4.0, 0.45 * cols + 1.5) + label_in + 1.2, max(4.0, 0.45 * rows + 1.5) + label_in * 0.75))
    data = tau.to_numpy(dtype=float)
    im = ax.imshow(np.ma.masked_invalid(data), cmap="RdBu_r", vmin=-1, vmax=1)
    ax.set_xticks(range(cols), [str(c) for c in tau.columns], rotation=60, ha="right", rotation_mode="anchor", fontsize=8)
    ax.set_yticks(range(rows), [str(c) for c in tau.index], fontsize=8)
    for i in range(rows):
        for j in range(cols):
            v = data[i, j]
            if math.isnan(v):
                continue
            star = "*" if p.iat[i, j] < 0.05 else ""
            text = f"{v:.2f}{star}" if k <= 30 else star  # beyond 30 benchmarks only the marks fit
            if text:
                ax.text(j, i, text, ha="center", va="center", fontsize=7 if k <= 30 else 6, color="white" if abs(v) > 0.6 else "black")
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    ax.set_title(title)
    return _save(fig, path)


def ability_bars(table: pd.DataFrame, path: Path) -> Path:
    """Seed 003 Figure 3: per ability, tau with the static and with the interactive side (* p < 0.05)."""
    fig, ax = plt.subplots(figsize=(8.5, max(2.5, 0.5 * len(table) + 1.5)))
    y = np.arange(len(table))
    for offset, side, colour in ((-0.2, "static", "#4c72b0"), (0.2, "interactive", "#dd8452")):
        taus = table[f"tau_{side}"].to_numpy(dtype=float)
        ax.barh(y + offset, np.nan_to_num(taus), height=0.4, label=side, color=colour)
        for yi, t, pv in zip(y + offset, taus, table[f"p_{side}"]):
            text = "n/a" if math.isnan(t) else f"{t:.2f}{'*' if pv < 0.05 else ''}"
            ax.text(0 if math.isnan(t) else t, yi, " " + text, va="center", fontsize=8)
    ax.set_yticks(y, [_wrapped(n, 32) for n in table["name"]])
    ax.axvline(0, color="grey", lw=0.8)
    ax.set_xlim(-1.15, 1.15)
    ax.set_xlabel("Kendall tau-b")
    ax.set_title("Abilities vs static and interactive assessments (* p < 0.05)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8)
    ax.invert_yaxis()
    return _save(fig, path)


def pair_scatter(pair: pd.DataFrame, model_a: str, model_b: str, path: Path) -> Path:
    """Seed 003 Figure 2: each benchmark at (score of A, score of B) with the diagonal; label = name (B/A ratio)."""
    fig, ax = plt.subplots(figsize=(6, 6))
    ax.plot([0, 100], [0, 100], color="grey", lw=0.8, ls="--")
    ax.scatter(pair["a"], pair["b"], s=25)
    at: dict[tuple[float, float], list[str]] = {}  # benchmarks on the same point share one label, never overlap
    for name, row in pair.iterrows():
        ratio = "*" if math.isnan(row["ratio"]) else f"{row['ratio']:.2f}"
        at.setdefault((round(float(row["a"]), 1), round(float(row["b"]), 1)), []).append(f"{name} ({ratio})")
    texts = []
    for (x, y), names in at.items():
        text = "\n".join(names) if len(names) <= 6 else "\n".join(names[:5] + [f"+{len(names) - 5} more"])
        line = {"arrowstyle": "-", "lw": 0.4, "color": "grey", "shrinkA": 0, "shrinkB": 2}
        label = ax.annotate(text, (x, y), fontsize=7, xytext=(4, 4), textcoords="offset points", va="bottom", arrowprops=line)
        label.set_in_layout(False)  # kept inside the axes by spread_labels: the layout need not make room
        texts.append(label)
    hi = max(100.0, float(np.nanmax(pair[["a", "b"]].to_numpy())) if len(pair) else 100.0)
    ax.set_xlim(0, hi * 1.02)
    ax.set_ylim(0, hi * 1.02)
    ax.set_xlabel(_wrapped(model_a, 60))
    ax.set_ylabel(_wrapped(model_b, 60))
    ax.set_title("Discriminative power (ratio = B / A; * undefined)")
    fig.tight_layout()
    spread_labels(fig, texts)
    return _save(fig, path)


def spread_labels(fig, texts: list) -> list:
    """Move annotation labels (``textcoords="offset points"``) so that no two overlap and each stays inside its axes
    (clear of the title and the axis labels):
    each label, lowest point first, takes the nearest free place on its right or left, going up and down by
    steps of a fifth of its height (its line to the point shows where it belongs). Returns the final boxes of the
    texts (display pixels, without the lines), for the tests."""
    renderer = fig.canvas.get_renderer()
    scale = fig.dpi / 72
    placed: list = []
    for text in sorted(texts, key=lambda t: (t.xy[1], t.xy[0])):
        frame = text.axes.bbox
        x0, y0 = text.get_position()
        text.update_positions(renderer)
        start = MplText.get_window_extent(text, renderer)  # the label alone, not its line to the point
        step = max(start.height / 5, 2.0)
        shifts = [(dx, k * sign * step) for k in range(400) for sign in (1, -1) for dx in (0.0, -start.width - 8 * scale)]
        best = shifts[0]
        for dx, dy in shifts:
            box = start.translated(dx, dy)
            inside = box.x0 >= frame.x0 and box.x1 <= frame.x1 and box.y0 >= frame.y0 and box.y1 <= frame.y1
            if inside and not any(box.overlaps(b) for b in placed):
                best = (dx, dy)
                break
        text.set_position((x0 + best[0] / scale, y0 + best[1] / scale))
        text.update_positions(renderer)
        placed.append(MplText.get_window_extent(text, renderer))
    return placed


def grouped_bars(table: pd.DataFrame, path: Path, title: str, ylabel: str = "") -> Path:
    """Rows = groups on the x axis, columns = one bar series each (e.g. models)."""
    per_group = max(1.0, 0.6 * max(1, len(table.columns)) ** 0.5)  # inches: room for a label of 16 characters a line
    fig, ax = plt.subplots(figsize=(max(5.0, per_group * len(table) + 3), 4))
    x = np.arange(len(table))
    width = 0.8 / max(1, len(table.columns))
    for i, col in enumerate(table.columns):
        ax.bar(x + (i - (len(table.columns) - 1) / 2) * width, table[col].to_numpy(dtype=float), width=width, label=_wrapped(col, 30))
    ax.set_xticks(x, [_wrapped(i, 16) for i in table.index], fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))
    return _save(fig, path)


def _wrapped(label: object, width: int) -> str:
    """``label`` on lines of about ``width`` characters, broken at spaces, ``/`` and ``_`` (never cut short)."""
    text = str(label).replace("/", "/ ").replace("_", "_ ")
    return "\n".join(line.replace("/ ", "/").replace("_ ", "_") for line in textwrap.wrap(text, width, break_long_words=False))


def pca_scatter(coords: pd.DataFrame, path: Path, title: str) -> Path:
    """Models in the plane of the first two principal components, coloured by k-means cluster."""
    fig, ax = plt.subplots(figsize=(6, 5))
    ax.scatter(coords["pc1"], coords["pc2"], c=[f"C{int(k) % 10}" for k in coords["cluster"]], s=50)
    for name, row in coords.iterrows():
        ax.annotate(_short(name, 30), (row["pc1"], row["pc2"]), fontsize=8, xytext=(4, 4), textcoords="offset points")
    ax.set_xlabel("PC1")
    ax.set_ylabel("PC2")
    ax.margins(0.2)
    ax.set_title(title)
    return _save(fig, path)
