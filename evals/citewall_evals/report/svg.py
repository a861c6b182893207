"""Inline SVG charts for the HTML report: no script, no external asset, text escaped.

Three shapes cover every figure: grouped horizontal bars (metric values in 0-1, one group per
row, one bar per series), a 2x2 confusion matrix, and lines over a run (the extraction curves).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

PALETTE = ("#3b6ea5", "#e07b39", "#5a9e6f", "#9c5fb5", "#c44e52", "#8c8c8c")


def grouped_bars(
    title: str,
    rows: Sequence[tuple[str, Mapping[str, float]]],
    series: Sequence[str],
    *,
    width: int = 640,
    bar_h: int = 14,
) -> str:
    """Horizontal bars in [0, 1]: ``rows`` are (label, {series: value}); one colour per series."""
    label_w, pad, right = 170, 8, 60
    plot_w = width - label_w - right
    group_h = bar_h * max(1, len(series)) + pad
    legend_h = 22
    height = 30 + legend_h + group_h * len(rows) + 20
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">',
        f'<text x="4" y="18" font-size="14" font-weight="bold">{escape(title)}</text>',
    ]
    x = label_w
    for i, name in enumerate(series):
        colour = PALETTE[i % len(PALETTE)]
        out.append(f'<rect x="{x}" y="28" width="10" height="10" fill="{colour}"/>')
        out.append(f'<text x="{x + 14}" y="37" font-size="11">{escape(name)}</text>')
        x += 14 + 7 * len(name) + 16
    y0 = 30 + legend_h
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        tx = label_w + tick * plot_w
        out.append(
            f'<line x1="{tx:.1f}" y1="{y0 - 4}" x2="{tx:.1f}" y2="{height - 18}" '
            'stroke="#ddd" stroke-width="1"/>'
        )
        out.append(
            f'<text x="{tx:.1f}" y="{height - 6}" font-size="10" text-anchor="middle">'
            f"{tick:g}</text>"
        )
    for r, (label, values) in enumerate(rows):
        gy = y0 + r * group_h
        out.append(
            f'<text x="{label_w - 6}" y="{gy + group_h / 2:.1f}" font-size="11" '
            f'text-anchor="end" dominant-baseline="middle">{escape(label)}</text>'
        )
        for i, name in enumerate(series):
            value = values.get(name)
            if value is None:
                continue
            v = max(0.0, min(1.0, float(value)))
            by = gy + i * bar_h
            colour = PALETTE[i % len(PALETTE)]
            out.append(
                f'<rect x="{label_w}" y="{by}" width="{v * plot_w:.1f}" height="{bar_h - 2}" '
                f'fill="{colour}"><title>{escape(name)}: {float(value):.3f}</title></rect>'
            )
            out.append(
                f'<text x="{label_w + v * plot_w + 4:.1f}" y="{by + bar_h / 2:.1f}" '
                f'font-size="10" dominant-baseline="middle">{float(value):.3f}</text>'
            )
    out.append("</svg>")
    return "".join(out)


def confusion_matrix(title: str, tp: int, fp: int, fn: int, tn: int) -> str:
    """A 2x2 matrix: rows = hand label, columns = judge."""
    cell, left, top = 90, 120, 50
    width, height = left + 2 * cell + 10, top + 2 * cell + 10
    total = max(1, tp + fp + fn + tn)
    cells = (
        (0, 0, tp, "#5a9e6f"),
        (0, 1, fn, "#c44e52"),
        (1, 0, fp, "#c44e52"),
        (1, 1, tn, "#5a9e6f"),
    )
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">',
        f'<text x="4" y="16" font-size="13" font-weight="bold">{escape(title)}</text>',
        f'<text x="{left + cell / 2}" y="{top - 8}" font-size="11" text-anchor="middle">'
        "judge: supports</text>",
        f'<text x="{left + 1.5 * cell}" y="{top - 8}" font-size="11" text-anchor="middle">'
        "judge: does not</text>",
        f'<text x="{left - 6}" y="{top + cell / 2}" font-size="11" text-anchor="end">'
        "label: supports</text>",
        f'<text x="{left - 6}" y="{top + 1.5 * cell}" font-size="11" text-anchor="end">'
        "label: does not</text>",
    ]
    for row, col, count, colour in cells:
        x, y = left + col * cell, top + row * cell
        opacity = 0.15 + 0.85 * count / total
        out.append(
            f'<rect x="{x}" y="{y}" width="{cell - 2}" height="{cell - 2}" fill="{colour}" '
            f'fill-opacity="{opacity:.2f}"/>'
        )
        out.append(
            f'<text x="{x + cell / 2}" y="{y + cell / 2}" font-size="18" text-anchor="middle" '
            f'dominant-baseline="middle">{count}</text>'
        )
    out.append("</svg>")
    return "".join(out)


def line_chart(
    title: str,
    series: Mapping[str, Sequence[tuple[float, float]]],
    *,
    x_label: str,
    y_label: str,
    y_max: float = 1.0,
    width: int = 640,
    height: int = 340,
    dashed: Sequence[str] = (),
) -> str:
    """Lines of (x, y) points, y in [0, ``y_max``], x from 0 to the largest x; one colour per
    series, a legend on the right (series named in ``dashed`` drawn dashed; the first series
    widest, so coinciding lines stay visible)."""
    left, top, legend_w, bottom = 50, 30, 190, 40
    plot_w, plot_h = width - left - legend_w - 10, height - top - bottom
    x_max = max((x for points in series.values() for x, _ in points), default=1.0) or 1.0
    y_top = y_max or 1.0

    def px(x: float) -> float:
        return left + x / x_max * plot_w

    def py(y: float) -> float:
        return top + plot_h - max(0.0, min(y_top, y)) / y_top * plot_h

    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">',
        f'<text x="4" y="18" font-size="14" font-weight="bold">{escape(title)}</text>',
    ]
    for i in range(5):
        y = y_top * i / 4
        out.append(
            f'<line x1="{left}" y1="{py(y):.1f}" x2="{left + plot_w}" y2="{py(y):.1f}" '
            'stroke="#ddd" stroke-width="1"/>'
        )
        out.append(
            f'<text x="{left - 4}" y="{py(y) + 3:.1f}" font-size="10" text-anchor="end">'
            f"{y:.2g}</text>"
        )
    for i in range(5):
        x = x_max * i / 4
        out.append(
            f'<text x="{px(x):.1f}" y="{top + plot_h + 14}" font-size="10" '
            f'text-anchor="middle">{x:g}</text>'
        )
    out.append(
        f'<text x="{left + plot_w / 2:.1f}" y="{height - 6}" font-size="11" '
        f'text-anchor="middle">{escape(x_label)}</text>'
    )
    out.append(
        f'<text x="12" y="{top + plot_h / 2:.1f}" font-size="11" text-anchor="middle" '
        f'transform="rotate(-90 12 {top + plot_h / 2:.1f})">{escape(y_label)}</text>'
    )
    for i, (name, points) in enumerate(series.items()):
        colour = PALETTE[i % len(PALETTE)]
        dash = ' stroke-dasharray="5 3"' if name in dashed else ""
        path = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in points)
        # Earlier lines drawn wider, so a line that coincides with a later one still shows.
        stroke = 1.5 + 2.5 * (len(series) - 1 - i) / max(1, len(series) - 1)
        out.append(
            f'<polyline points="{path}" fill="none" stroke="{colour}" '
            f'stroke-width="{stroke:.1f}"{dash}><title>{escape(name)}</title></polyline>'
        )
        ly = top + 6 + i * 16
        lx = left + plot_w + 14
        out.append(
            f'<line x1="{lx}" y1="{ly}" x2="{lx + 18}" y2="{ly}" stroke="{colour}" '
            f'stroke-width="2"{dash}/>'
        )
        out.append(f'<text x="{lx + 22}" y="{ly + 4}" font-size="11">{escape(name)}</text>')
    out.append("</svg>")
    return "".join(out)
