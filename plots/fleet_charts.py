"""The fleet report's charts: one series per machine, a table of what each chart draws. A machine
with nothing to draw in a chart (no GPU, or the case not run) is named in that chart's caption."""

from . import results
from .common import new_figure, plain_log_formatter, save, size_axis


def rows(view=None, groups=None, series=("",), **fields):
    """Rows of one view, compare group and series (each a tuple of the names files have used for it)."""

    def pick(row):
        return (
            (view is None or row.get("view") == view)
            and (groups is None or row.get("compare_group") in groups)
            and row.get("series", "") in series
            and all(row.get(k) == v for k, v in fields.items())
        )

    return pick


GB = 1e9


def bandwidth(case):
    return results.median_field(case, "bytes_per_second") / GB


def gflops(case):
    return results.median_field(case, "flop_per_second") / 1e9


def step_ms(case):
    return case["seconds"] * 1e3


# Each family's chart module declares what the fleet report draws of it (plots/families.py), in its ORDER:
# FLEET_SWEEPS = [(stem, title, rows, y value of a case, y label, log y axis)] and
# FLEET_SPEEDUPS = [(stem, title, compare groups, series, GPU views in order of preference)]: the
# speedup over all CPU threads.
def _declared(name):
    from . import families

    return [entry for module in families.modules() for entry in getattr(module, name, [])]


def _size(row):
    sweep = row.get("sweep") or "bytes"
    return sweep, row.get(sweep, row.get("bytes"))


def _sweep_chart(docs, labels, outdir, stem, title, pick, value, ylabel, log_y):
    fig, ax = new_figure(title)
    drawn, absent, sweep, xs = 0, [], "bytes", []
    for doc, label in zip(docs, labels):
        points = []
        for case in results.cases(doc, pick).values():
            sweep, x = _size(case["row"])
            try:
                y = value(case)
            except TypeError:  # the rate is missing from its rows
                y = None
            if isinstance(x, (int, float)) and y:
                points.append((x, y))
        if not points:
            absent.append(label)
            continue
        points.sort()
        ax.plot(
            [p[0] for p in points], [p[1] for p in points], marker="o", markersize=3, label=label
        )
        xs += [p[0] for p in points]
        drawn += 1
    if not drawn:
        fig.clf()
        return None, f"{title}: no machine measured it"
    size_axis(ax, sweep, xs)
    ax.set_ylabel(ylabel + (" (log scale)" if log_y else ""))
    if log_y:
        ax.set_yscale("log")
        plain_log_formatter(ax.yaxis)
    ax.legend(fontsize=8)
    caption = "One series per machine; median of the valid repetitions at each size."
    if absent:
        caption += " Not drawn (no GPU, or not run): " + "; ".join(absent) + "."
    return save(fig, outdir, stem, title, caption), None


def _speedup_points(doc, groups, series, views):
    """(sweep, [(size, speedup)]) of the first view in `views` the file has for these groups and series."""
    speedups = [
        s
        for s in (results.analysis(doc) or {}).get("speedups", [])
        if s.get("compare_group") in groups
        and s.get("series", "") in series
        and s.get("cpu_view") == "cpu_all"
    ]
    for view in views:
        points = sorted((s["size"], s["speedup"]) for s in speedups if s.get("view") == view)
        if points:
            return next(s.get("sweep", "") for s in speedups if s.get("view") == view), points
    return "", []


def _speedup_chart(docs, labels, outdir, stem, title, groups, series, views):
    fig, ax = new_figure(title)
    drawn, absent, sweep, xs = 0, [], "bytes", []
    for doc, label in zip(docs, labels):
        machine_sweep, points = _speedup_points(doc, groups, series, views)
        if not points:
            absent.append(label)
            continue
        sweep = machine_sweep
        ax.plot(
            [p[0] for p in points], [p[1] for p in points], marker="o", markersize=3, label=label
        )
        xs += [p[0] for p in points]
        drawn += 1
    if not drawn:
        fig.clf()
        return None, f"{title}: no machine has this GPU-vs-CPU pair"
    size_axis(ax, sweep, xs)
    ax.set_yscale("log")
    ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
    ax.set_ylabel("speedup = CPU time / GPU time (log scale; above 1 the GPU wins)")
    plain_log_formatter(ax.yaxis)
    ax.legend(fontsize=8)
    caption = "One series per machine, from each file's analysis block; the dashed line is where the GPU starts to win."
    if absent:
        caption += " Not drawn (no GPU, or not run): " + "; ".join(absent) + "."
    return save(fig, outdir, stem, title, caption), None


def charts(docs, labels, outdir):
    """(charts drawn, lines saying what could not be drawn and why)."""
    drawn, missing = [], []
    for stem, title, pick, value, ylabel, log_y in _declared("FLEET_SWEEPS"):
        chart, why = _sweep_chart(docs, labels, outdir, stem, title, pick, value, ylabel, log_y)
        (drawn.append(chart) if chart else missing.append(why))
    for stem, title, groups, series, views in _declared("FLEET_SPEEDUPS"):
        chart, why = _speedup_chart(docs, labels, outdir, stem, title, groups, series, views)
        (drawn.append(chart) if chart else missing.append(why))
    return drawn, missing
