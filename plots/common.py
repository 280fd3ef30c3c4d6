"""What every chart shares: the headless backend, saving PNG + SVG, readable log axes."""

import math
import re

import matplotlib
import matplotlib.image
import matplotlib.text

from . import files

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.category import StrCategoryFormatter  # noqa: E402
from matplotlib.ticker import (
    FixedFormatter,
    FixedLocator,
    FuncFormatter,
    NullFormatter,
    NullLocator,
)  # noqa: E402

UNITS = ["", "Ki", "Mi", "Gi", "Ti"]
PNG_DPI = 110


def binary_size(value, suffix=""):
    """4096 -> '4 Ki' (+suffix); non-whole values keep 3 significant digits."""
    u = 0
    while value >= 1024 and u < len(UNITS) - 1:
        value /= 1024
        u += 1
    text = f"{value:.0f}" if abs(value - round(value)) < 1e-9 else f"{value:.3g}"
    return f"{text} {UNITS[u]}{suffix}".rstrip()


def sweep_size(sweep, value):
    if sweep == "bytes":
        return binary_size(value, "B")
    if sweep == "elements":
        return binary_size(value)
    return f"{value:.0f}" if value >= 10 else f"{value:.3g}"


SWEEP_LABEL = {
    "bytes": "size (bytes, binary multiples)",
    "elements": "elements",
    "n": "matrix size N",
    "batch": "batch size",
}


def size_axis(ax, sweep, values):
    """Log base-2 x axis with at most ~8 labelled powers of two, labelled in the sweep's units."""
    values = [v for v in values if v and v > 0]
    ax.set_xscale("log", base=2)
    ax.set_xlabel(SWEEP_LABEL.get(sweep, sweep))
    if not values:
        return
    lo, hi = math.floor(math.log2(min(values))), math.ceil(math.log2(max(values)))
    step = max(1, math.ceil((hi - lo + 1) / 8))
    ticks = [2.0**e for e in range(lo, hi + 1, step)]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: sweep_size(sweep, v)))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_minor_formatter(NullFormatter())


def plain_log_formatter(ax_axis):
    """Log axis labels as plain numbers (0.1, 1, 10) instead of 10^k. Call after plotting: an axis
    spanning less than two decades also labels its minor ticks (3, 4, 6), else only the decades."""
    plain = FuncFormatter(lambda v, _: f"{v:g}")
    ax_axis.set_major_formatter(plain)
    lo, hi = sorted(ax_axis.get_view_interval())
    narrow = lo > 0 and hi / lo < 100
    ax_axis.set_minor_formatter(plain if narrow else NullFormatter())


def si_log_formatter(ax_axis):
    """Log axis labels with SI prefixes (10k, 1M) for counts such as samples per second."""

    def fmt(v, _):
        for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
            if v >= scale:
                return f"{v / scale:g}{prefix}"
        return f"{v:g}"

    ax_axis.set_major_formatter(FuncFormatter(fmt))


def seconds_axis(ax, label="time per iteration"):
    """Log y axis of seconds, labelled with the unit that suits each tick (ns, µs, ms, s)."""
    ax.set_yscale("log")

    def fmt(v, _):
        for scale, unit in ((1, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")):
            if v >= scale:
                return f"{v / scale:g} {unit}"
        return f"{v:g} s"

    ax.yaxis.set_major_formatter(FuncFormatter(fmt))
    ax.set_ylabel(f"{label} (log scale)")


def new_figure(title, width=8, height=5):
    fig, ax = plt.subplots(figsize=(width, height), layout="constrained")
    ax.set_title(title)
    ax.grid(True, which="major", alpha=0.3)
    return fig, ax


def slug(text):
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").lower()


def literal(text):
    """`text` as matplotlib shows it literally: a '$' would otherwise start mathtext (a host or group
    named "$x$" would be typeset, or fail to parse and lose the chart)."""
    return str(text).replace("$", r"\$")


def literal_texts(fig):
    """Every text of `fig` set from data (titles, axis labels, legends, annotations, category ticks)
    shown literally, in one place before saving. Numeric tick labels are left alone: their formatters may use
    mathtext (10^k) on purpose, and they hold no data."""
    ticks = set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            ticks.add(axis.offsetText)
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                ticks.update((tick.label1, tick.label2))
            for which, formatter in (
                ("major", axis.get_major_formatter()),
                ("minor", axis.get_minor_formatter()),
            ):
                if isinstance(formatter, FixedFormatter):
                    formatter.seq = [literal(t) for t in formatter.seq]
                elif isinstance(formatter, StrCategoryFormatter):
                    escaped = FuncFormatter(lambda v, pos, f=formatter: literal(f(v, pos)))
                    (axis.set_major_formatter if which == "major" else axis.set_minor_formatter)(
                        escaped
                    )
    for text in fig.findobj(matplotlib.text.Text):
        if text not in ticks:
            text.set_parse_math(False)


MAX_SERIES = 8  # more lines than this on one axes and no single one can be followed


def _series_count(ax):
    """Data series on `ax`: labelled lines in data coordinates with two or more points (not a marked
    size or level), and bar groups."""
    lines = [
        ln
        for ln in ax.get_lines()
        if not ln.get_label().startswith("_")
        and ln.get_transform() == ax.transData
        and sum(1 for x, y in ln.get_xydata() if math.isfinite(x) and math.isfinite(y)) >= 2
    ]
    return len(lines) + len(ax.containers)


def _legend_outside(fig):
    """Every axes' legend moved right of its axes (constrained layout makes room): a legend inside
    the axes covers some data sooner or later, whatever corner it is put in."""
    moved = False
    for ax in fig.axes:
        legend = ax.get_legend()
        if legend is None or legend.get_bbox_to_anchor().x0 >= ax.get_window_extent().x1:
            continue
        texts = legend.get_texts()
        size = texts[0].get_fontsize() if texts else "x-small"
        title = legend.get_title().get_text() or None
        ax.legend(
            legend.legend_handles,
            [t.get_text() for t in texts],
            loc="upper left",
            bbox_to_anchor=(1.01, 1.0),
            borderaxespad=0.0,
            fontsize=size,
            title=title,
            title_fontsize=size,
        )
        moved = True
    return moved


def _widen_for_legends(fig):
    """The figure made wider by its widest legend, so that the data area (and its title) keeps its width.
    A legend's width is its texts' and handles': no drawing of the figure is needed to measure it."""
    renderer = fig.canvas.get_renderer()
    widths = [
        ax.get_legend().get_window_extent(renderer).width
        for ax in fig.axes
        if ax.get_legend() is not None
    ]
    if widths:
        fig.set_figwidth(fig.get_figwidth() + max(widths) / fig.dpi + 0.1)


def _single_points_as_markers(fig):
    """A line through one point draws nothing: give it a marker so the point shows."""
    for ax in fig.axes:
        for ln in ax.get_lines():
            points = [(x, y) for x, y in ln.get_xydata() if math.isfinite(x) and math.isfinite(y)]
            if len(points) == 1 and ln.get_marker() in (None, "None", "", " "):
                ln.set_marker("o")


def _overlapping(extents):
    boxes = sorted(extents, key=lambda b: b.x0)
    return any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1 : i + 2])


def _tick_labels(axis, renderer):
    return [
        t.get_window_extent(renderer)
        for t in axis.get_ticklabels(which="both")
        if t.get_visible() and t.get_text().strip()
    ]


def _readable_ticks(fig):
    """Tick labels that run into each other ("3×10³4×10³") lose their minor labels; returns whether any did
    (the figure must then be drawn again)."""
    renderer = fig.canvas.get_renderer()
    changed = False
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if _overlapping(_tick_labels(axis, renderer)):
                axis.set_minor_formatter(NullFormatter())
                changed = True
    return changed


def chart_problems(fig, drawn=False):
    """What makes a chart hard to read, checked on matplotlib's own extents after drawing: more than
    MAX_SERIES series on one axes, a legend over the axes' data area, tick labels that overlap.
    `drawn`: the figure was just drawn as it is (save() does), so its extents are current."""
    if not drawn:
        fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    problems = []
    for index, ax in enumerate(fig.axes):
        if not ax.get_visible():
            continue
        name = ax.get_title() or f"axes {index}"
        if _series_count(ax) > MAX_SERIES:
            problems.append(f"{name}: {_series_count(ax)} series (at most {MAX_SERIES})")
        area = ax.get_window_extent(renderer)
        for legend in [ax.get_legend()] + list(fig.legends):
            if legend is not None and legend.get_window_extent(renderer).overlaps(area):
                problems.append(f"{name}: the legend covers the data area")
        for axis, which in ((ax.xaxis, "x"), (ax.yaxis, "y")):
            if _overlapping(_tick_labels(axis, renderer)):
                problems.append(f"{name}: {which} tick labels overlap")
    return sorted(set(problems))


def save(fig, outdir, stem, title, caption=""):
    """Writes stem.png and stem.svg, each whole or not at all (files.OutputError when one cannot be
    written); returns the chart record report.html lists, with `problems` (chart_problems) left after
    moving legends outside the data, marking lone points and thinning crowded tick labels. `stem` (made from
    data) is bounded and made distinct from the other charts of this run and from the inputs (files.file_stem)."""
    stem = files.file_stem(outdir, stem, title)
    png, svg = outdir / f"{stem}.png", outdir / f"{stem}.svg"
    try:
        _single_points_as_markers(fig)
        moved = _legend_outside(
            fig
        )  # a moved legend is a new one: its texts are made literal below
        literal_texts(fig)
        if moved:
            _widen_for_legends(fig)
        fig.set_dpi(
            PNG_DPI
        )  # drawn once at the PNG's resolution: its pixels are the PNG (no savefig redraw)
        fig.canvas.draw()
        if _readable_ticks(fig):
            fig.canvas.draw()
        problems = chart_problems(fig, drawn=True)
        # What savefig(format="png") writes, less its own draw of the figure: the canvas holds this draw.
        files.write_atomically(
            png,
            lambda f: matplotlib.image.imsave(
                f, fig.canvas.buffer_rgba(), format="png", origin="upper", dpi=fig.dpi
            ),
        )
        # The layout is settled (in fractions of the figure, whatever the resolution): the SVG keeps it
        # rather than solving it again.
        fig.set_layout_engine("none")
        files.write_atomically(svg, lambda f: fig.savefig(f, format="svg"))
    finally:
        plt.close(fig)
    return {
        "title": title,
        "png": png.name,
        "svg": svg.name,
        "caption": caption,
        "problems": problems,
    }


def crossover_where(c, size_text):
    """Where an analysis crossover lies, in words: "≈ 287" once located (its range within ±10%),
    else "in 256–1024" (the whole range: between measured sizes nothing is known). Files analysed
    before `located` existed read as not located."""

    def text(key, otherwise):
        return size_text(c[key]) if isinstance(c.get(key), (int, float)) else otherwise

    if c.get("located"):
        return f"≈ {text('size', '?')}"
    return f"in {text('low', 'below the smallest')}–{text('high', 'beyond the largest')}"


def crossover(packed, other):
    """Smallest N from which series `packed` is faster than series `other` (each [(N, seconds, …)] sorted by
    N), for good: interpolated on log N where log(t_other / t_packed) crosses 0; the smallest N when
    packed wins at every N; None when it loses at the largest N both measured. The analysis block's
    crossovers (find_crossover) follow the same rule; this is for files analysed before they existed."""
    t_other = dict((n, t) for n, t, *_ in other)
    ratios = [
        (n, t_other[n] / t) for n, t, *_ in packed if n in t_other and t > 0 and t_other[n] > 0
    ]
    if not ratios or ratios[-1][1] < 1:
        return None
    losing = [i for i, (_, r) in enumerate(ratios) if r < 1]
    if not losing:
        return ratios[0][0]
    (n0, r0), (n1, r1) = ratios[losing[-1]], ratios[losing[-1] + 1]
    x0, x1, y0, y1 = math.log(n0), math.log(n1), math.log(r0), math.log(r1)
    return math.exp(x0 + (0 - y0) * (x1 - x0) / (y1 - y0))
