"""The scan summary as one self-contained HTML page: the Markdown tables, and two charts drawn as inline SVG.

No script and no external resource (the page is opened from a file share or attached to a ticket, often offline):
the charts are plain ``<svg>`` elements written here. "Jobs by cause" is a horizontal bar per cause; "by cause over
time" stacks each day's (or week's) explained jobs by cause. Every bar has a ``<title>``, which browsers show on
hover, and a ``data-`` attribute with its numbers.
"""

from __future__ import annotations

import html
from collections import Counter
from datetime import date, timedelta

from .i18n import t
from .render import markdown_to_html
from .scan_summary import Summary, format_summary

__all__ = ["summary_html"]

PALETTE = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f")
"""Tableau 10 (colour-blind-aware); the last colour is "other causes"."""
_OTHER = "#bab0ac"
_BARS = 15
"""Causes drawn by name in the bar chart; the rest are one "other" bar."""
_STACKED = len(PALETTE)
"""Causes stacked by name over time; the rest are "other"."""


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def _bars(summary: Summary, lang: str) -> str:
    ranked = summary.ranked(summary.causes)
    shown = [(c.key, c.title_zh if lang == "zh" else c.title, c.jobs) for c in ranked[:_BARS]]
    rest = sum(c.jobs for c in ranked[_BARS:])
    if rest:
        shown.append((t("scan.other", lang), t("scan.more_causes", lang, n=len(ranked) - _BARS), rest))
    if not shown:
        return f"<p>{_esc(t('scan.chart_none', lang))}</p>"
    top = max(n for _, _, n in shown)
    label_w, bar_w, row_h = 90, 520, 22
    width, height = label_w + bar_w + 70, row_h * len(shown) + 10
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="by-cause" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{_esc(t("scan.chart_causes", lang))}">'
    ]
    for i, (key, title, jobs) in enumerate(shown):
        y = 5 + i * row_h
        w = max(1.0, bar_w * jobs / top)
        colour = _OTHER if i == _BARS else PALETTE[0]
        parts.append(
            f'<text x="{label_w - 6}" y="{y + 15}" text-anchor="end" font-size="12">{_esc(key)}</text>'
            f'<rect class="bar" data-cause="{_esc(key)}" data-jobs="{jobs}" x="{label_w}" y="{y + 2}" '
            f'width="{w:.1f}" height="{row_h - 6}" fill="{colour}"><title>{_esc(key)}: {jobs}. {_esc(title)}</title>'
            f'</rect><text x="{label_w + w + 5:.1f}" y="{y + 15}" font-size="12">{jobs}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _buckets(days: list[str]) -> tuple[list[str], int]:
    """The time axis: every day from the first to the last, or every week (Mondays) past 60 days."""
    first, last = date.fromisoformat(min(days)), date.fromisoformat(max(days))
    step = 1 if (last - first).days <= 60 else 7
    if step == 7:
        first -= timedelta(days=first.weekday())
    out = []
    current = first
    while current <= last:
        out.append(current.isoformat())
        current += timedelta(days=step)
    return out, step


def _bucket_of(day: str, step: int) -> str:
    if step == 1:
        return day
    parsed = date.fromisoformat(day)
    return (parsed - timedelta(days=parsed.weekday())).isoformat()


def _over_time(summary: Summary, lang: str) -> str:
    ranked = summary.ranked(summary.causes)
    days = sorted({d for c in ranked for d in c.days})
    if not days:
        return f"<p>{_esc(t('scan.chart_undated', lang))}</p>"
    axis, step = _buckets(days)
    named = ranked[: _STACKED - 1] if len(ranked) > _STACKED else ranked
    series: list[tuple[str, str, Counter[str]]] = []
    for i, cause in enumerate(named):
        counts: Counter[str] = Counter()
        for day, n in cause.days.items():
            counts[_bucket_of(day, step)] += n
        series.append((cause.key, PALETTE[i], counts))
    if len(ranked) > len(named):
        other: Counter[str] = Counter()
        for cause in ranked[len(named) :]:
            for day, n in cause.days.items():
                other[_bucket_of(day, step)] += n
        series.append((t("scan.other", lang), _OTHER, other))
    totals = [sum(counts[b] for _, _, counts in series) for b in axis]
    top = max(totals) or 1
    left, plot_w, plot_h, legend_h = 40, 640, 220, 22 * ((len(series) + 3) // 4)
    col = plot_w / len(axis)
    width, height = left + plot_w + 10, plot_h + 40 + legend_h
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" id="over-time" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{_esc(t("scan.chart_time", lang))}">',
        f'<line x1="{left}" y1="{plot_h + 5}" x2="{left + plot_w}" y2="{plot_h + 5}" stroke="#888"/>',
        f'<text x="{left - 4}" y="14" text-anchor="end" font-size="11">{top}</text>',
        f'<text x="{left - 4}" y="{plot_h + 5}" text-anchor="end" font-size="11">0</text>',
    ]
    for i, bucket in enumerate(axis):
        y = plot_h + 5.0
        for key, colour, counts in series:
            n = counts[bucket]
            if not n:
                continue
            h = plot_h * n / top
            y -= h
            parts.append(
                f'<rect class="seg" data-cause="{_esc(key)}" data-bucket="{bucket}" data-jobs="{n}" '
                f'x="{left + i * col + 1:.1f}" y="{y:.1f}" width="{max(1.0, col - 2):.1f}" height="{h:.1f}" '
                f'fill="{colour}"><title>{bucket}: {_esc(key)} {n}</title></rect>'
            )
    for i in sorted({0, len(axis) - 1, len(axis) // 2}):
        parts.append(
            f'<text x="{left + (i + 0.5) * col:.1f}" y="{plot_h + 20}" text-anchor="middle" font-size="11">'
            f"{axis[i]}</text>"
        )
    for i, (key, colour, _) in enumerate(series):
        x, y = left + (i % 4) * 160, plot_h + 32 + (i // 4) * 22
        parts.append(
            f'<rect x="{x}" y="{y}" width="12" height="12" fill="{colour}"/>'
            f'<text x="{x + 16}" y="{y + 11}" font-size="12">{_esc(key)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def summary_html(summary: Summary, lang: str = "en") -> str:
    """A standalone page: the summary's Markdown tables, with the two charts after the heading (``both``: the
    charts with English labels, the tables in both languages)."""
    one = "en" if lang == "both" else lang
    page = markdown_to_html(format_summary(summary, lang), t("scan.title", one))
    charts = (
        f"<h2>{_esc(t('scan.chart_causes', one))}</h2>\n<figure>{_bars(summary, one)}</figure>\n"
        f"<h2>{_esc(t('scan.chart_time', one))}</h2>\n<figure>{_over_time(summary, one)}</figure>\n"
    )
    head, sep, rest = page.partition("</h1>\n")
    return head + sep + charts + rest if sep else page.replace("<body>\n", "<body>\n" + charts, 1)
