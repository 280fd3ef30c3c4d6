"""Time vs size and speedup vs size, per compare_group (the GPU and CPU rows that answer the same
question): CPU and GPU (kernel only, pinned e2e, pageable e2e) with crossovers marked; speedups
over the CPU with the 1× line. A family whose chart module draws its own compare groups (batch
sweeps) is left to it (plots/families.py)."""

from . import common, families, results

ORDER = 20  # where these charts come in report.html, among the families' (plots/families.py)
TITLE = "time and speedup"

VIEW_STYLE = {
    "gpu_kernel": ("tab:green", "GPU kernel only"),
    "gpu_pinned": ("tab:blue", "GPU incl. pinned transfers"),
    "gpu_pageable": ("tab:orange", "GPU incl. pageable transfers"),
    "gpu_pinned_overlap": ("tab:purple", "GPU pinned, overlapped"),
    "cpu_1t": ("tab:gray", "CPU 1 thread"),
    "cpu_all": ("black", "CPU all threads"),
}
SERIES_STYLE = ["-", "--", "-.", ":"]
# With more series of one view than dash patterns (sweeps of many series), the marker tells them apart.
SERIES_MARKERS = ["o", "s", "^", "D", "v"]
CPU_PREFERENCE = ["cpu_all", "cpu_1t"]


# Rows another library measured (lab/tools/cpu_anchors.py, lab/tools/gpu_anchors.py): a colour of their
# own, so they never read as one of offloadbench's views.
ANCHOR_STYLE = {"pytorch": ("tab:red", "PyTorch"), "numpy": ("tab:brown", "numpy")}


def view_label(view, series):
    label = VIEW_STYLE.get(view, (None, view))[1]
    if series in ANCHOR_STYLE:
        return (
            f"{ANCHOR_STYLE[series][1]}: {label.replace('GPU kernel only', 'GPU, data resident')}"
        )
    return f"{label} [{series}]" if series else label


# One view per line in the main charts: a dash and a marker of its own as well as a colour.
VIEW_LINE = {
    "gpu_kernel": ("-", "o"),
    "gpu_pinned": ("--", "s"),
    "gpu_pageable": ("-.", "^"),
    "gpu_pinned_overlap": ((0, (5, 1, 1, 1)), "D"),
    "cpu_1t": (":", "v"),
    "cpu_all": ((0, (3, 1)), "P"),
}
SERIES_COLORS = [
    "tab:blue",
    "tab:orange",
    "tab:green",
    "tab:red",
    "tab:purple",
    "tab:brown",
    "tab:pink",
    "tab:olive",
]


def view_style(view, series=""):
    """The main charts' style: one line per view, told apart by colour, dash and marker."""
    if series in ANCHOR_STYLE:
        return style(view, 0, series)
    dash, marker = VIEW_LINE.get(view, ("-", "o"))
    return {
        "color": VIEW_STYLE.get(view, ("tab:cyan", view))[0],
        "linestyle": dash,
        "marker": marker,
    }


def series_style(index):
    """The detail charts' style: one view, one line per series, each its own colour, dash and marker."""
    return {
        "color": SERIES_COLORS[index % len(SERIES_COLORS)],
        "linestyle": SERIES_STYLE[index % len(SERIES_STYLE)],
        "marker": SERIES_MARKERS[index % len(SERIES_MARKERS)],
    }


def best_per_view(curves, size_of, score):
    """{(view, series): points} keeping each view's best series: the lowest score(point) at the largest
    size all of that view's series measured (the series with most points where they share none)."""
    by_view = {}
    for (view, series), points in curves.items():
        by_view.setdefault(view, []).append((series, points))
    chosen = {}
    for view, entries in by_view.items():
        shared = set.intersection(*({size_of(p) for p in points} for _, points in entries))
        at = max(shared) if shared else None

        def rank(entry):
            points = entry[1]
            if at is None:
                return (-len(points), 0)
            return (0, score(next(p for p in points if size_of(p) == at)))

        series, points = min(entries, key=rank)
        chosen[(view, series)] = points
    return chosen


def style(view, series_index, series=""):
    """Colour by view, dashes and then markers by series: no two series of one view look alike."""
    if series in ANCHOR_STYLE:
        return {
            "color": ANCHOR_STYLE[series][0],
            "linestyle": ":" if view.startswith("cpu") else "-",
            "marker": "o",
        }
    color = VIEW_STYLE.get(view, ("tab:cyan", view))[0]
    if view.startswith(
        "cpu"
    ):  # offloadbench's own CPU rows dashed; other CPU series (PyTorch, numpy anchors) dotted
        return {
            "color": color,
            "linestyle": "--" if series_index == 0 else ":",
            "marker": SERIES_MARKERS[series_index % len(SERIES_MARKERS)],
        }
    return {
        "color": color,
        "linestyle": SERIES_STYLE[series_index % len(SERIES_STYLE)],
        "marker": SERIES_MARKERS[(series_index // len(SERIES_STYLE)) % len(SERIES_MARKERS)],
    }


def paired_cases(doc, family_filter):
    """{compare_group: {(view, series): [case, ...] sorted by size}} for rows with pairing fields."""
    groups = {}
    for case in results.cases(
        doc, lambda r: r.get("compare_group") and r.get("view") and r.get("sweep")
    ).values():
        row = case["row"]
        if not family_filter(row.get("family", "")) or not isinstance(
            row.get(row["sweep"]), (int, float)
        ):
            continue
        case["size"] = row[row["sweep"]]
        groups.setdefault(row["compare_group"], {}).setdefault(
            (row["view"], row.get("series", "")), []
        ).append(case)
    for curves in groups.values():
        for case_list in curves.values():
            case_list.sort(key=lambda c: c["size"])
    return groups


def preferred_cpu_view(views):
    for view in CPU_PREFERENCE:
        if view in views:
            return view
    return None


def crossovers_for(doc, group):
    """The group's crossovers against its preferred CPU view."""
    found = [
        c
        for c in (results.analysis(doc) or {}).get("crossovers", [])
        if c.get("compare_group") == group
    ]
    cpu = preferred_cpu_view({c.get("cpu_view") for c in found})
    return [c for c in found if c.get("cpu_view") == cpu]


def draw_time_lines(ax, curves, value=lambda case: case["seconds"], styler=None):
    """One line per (view, series); `styler(index, view, series)` gives its style (default: style())."""
    series_index = {}
    for index, ((view, series), case_list) in enumerate(sorted(curves.items())):
        st = (
            styler(index, view, series)
            if styler
            else style(view, series_index.setdefault(series, len(series_index)), series)
        )
        xs = [c["size"] for c in case_list]
        ax.plot(
            xs, [value(c) for c in case_list], markersize=4, label=view_label(view, series), **st
        )


def _view_styler(index, view, series):
    return view_style(view, series)


def _series_styler(index, view, series):
    return series_style(index)


def _drawn(crossovers, curves):
    return [c for c in crossovers if (c.get("view"), c.get("series", "")) in curves]


def mark_crossovers(ax, crossovers, sweep):
    for c in crossovers:
        if c.get("kind") != "crossover" or not c.get("size"):
            continue
        color = VIEW_STYLE.get(c["view"], ("tab:red", ""))[0]
        label = (
            f"crossover {view_label(c['view'], c.get('series', ''))}: "
            f"{common.crossover_where(c, lambda v: common.sweep_size(sweep, v))}"
        )
        # A line only where the crossover is located; elsewhere the span it may lie in, unlabelled by a point.
        if c.get("located"):
            ax.axvline(c["size"], color=color, linestyle=":", linewidth=1.2, label=label)
            label = None
        if c.get("low") and c.get("high"):
            ax.axvspan(c["low"], c["high"], color=color, alpha=0.08, label=label)


def _no_crossover_note(ax, crossovers, sweep):
    notes = []
    for c in crossovers:
        if c.get("kind") == "cpu_wins_at_largest":
            notes.append(
                f"{view_label(c['view'], c.get('series', ''))}: never wins up to "
                f"{common.sweep_size(sweep, c['largest_size'])}"
            )
        elif c.get("kind") == "gpu_wins_all":
            notes.append(
                f"{view_label(c['view'], c.get('series', ''))}: wins at every measured size"
            )
    if notes:
        ax.text(
            0.01,
            0.99,
            "\n".join(notes),
            transform=ax.transAxes,
            va="top",
            fontsize="x-small",
            bbox={"facecolor": "white", "alpha": 0.8, "edgecolor": "none"},
        )


def time_chart(doc, outdir, group, curves):
    """Each view's fastest series (at most one line per view); the file's other series in detail_charts."""
    sweep = next(iter(curves.values()))[0]["row"]["sweep"]
    shown = best_per_view(curves, lambda c: c["size"], lambda c: c["seconds"])
    crossovers = crossovers_for(doc, group)
    title = _time_title(group, sweep, _drawn(crossovers, shown))
    fig, ax = common.new_figure(title, 9, 5.5)
    draw_time_lines(ax, shown, styler=_view_styler)
    mark_crossovers(ax, _drawn(crossovers, shown), sweep)
    _no_crossover_note(ax, _drawn(crossovers, shown), sweep)
    if not any(view.startswith("gpu") for view, _ in curves):
        ax.text(
            0.01,
            0.99,
            "no GPU rows" + _gpu_reason(doc, group).replace(" (GPU rows skipped:", ":").rstrip(")"),
            transform=ax.transAxes,
            va="top",
            fontsize="x-small",
            wrap=True,
            bbox={"facecolor": "white", "alpha": 0.8, "edgecolor": "none"},
        )
    common.size_axis(ax, sweep, [c["size"] for cl in curves.values() for c in cl])
    common.seconds_axis(ax)
    ax.legend(fontsize="x-small")
    cpu = crossovers[0]["cpu_view"] if crossovers else "the CPU"
    others = len(curves) - len(shown)
    return common.save(
        fig,
        outdir,
        f"time_{common.slug(group)}",
        title,
        "Median time per iteration, the fastest series of each view"
        + (f" ({others} other series in the detail chart below)" if others else "")
        + (
            f"; dotted lines: where each GPU view starts to beat {cpu}, where measured to ±10% "
            "(shaded: the range it may lie in, between measured sizes)."
            if crossovers
            else "."
        ),
    )


def _time_title(group, sweep, crossovers):
    """The chart's answer in its title: where the first GPU view (pinned transfers first) wins."""
    order = ["gpu_pinned", "gpu_pageable", "gpu_pinned_overlap", "gpu_kernel"]
    found = sorted(
        (
            c
            for c in crossovers
            if c.get("view") in order and c.get("kind") in ("crossover", "gpu_wins_all")
        ),
        key=lambda c: order.index(c["view"]),
    )
    if not found:
        return f"{group}: time vs {sweep}"
    c = found[0]
    phrase = VIEW_STYLE[c["view"]][1].replace("GPU ", "")
    if c["kind"] == "gpu_wins_all":
        return f"{group}: GPU wins at every {sweep} ({phrase})"
    where = common.crossover_where(c, lambda v: common.sweep_size(sweep, v))
    return f"{group}: GPU wins from {sweep} {where} ({phrase})"


def detail_time_chart(doc, outdir, group, curves):
    """Every series of the view with most of them, beside the fastest CPU line: what the main chart
    leaves out. None when the main chart already shows every series."""
    views = {}
    for view, series in curves:
        views.setdefault(view, []).append(series)
    view = max(views, key=lambda v: (len(views[v]), v.startswith("gpu")))
    if len(views[view]) < 2:
        return None
    sweep = next(iter(curves.values()))[0]["row"]["sweep"]
    cpu = preferred_cpu_view({v for v in views if v.startswith("cpu")})
    shown = {k: v for k, v in curves.items() if k[0] == view}
    if cpu and cpu != view:
        shown.update(
            best_per_view(
                {k: v for k, v in curves.items() if k[0] == cpu},
                lambda c: c["size"],
                lambda c: c["seconds"],
            )
        )
    label = VIEW_STYLE.get(view, (None, view))[1]
    title = f"{group}: every series, {label}"
    fig, ax = common.new_figure(title, 9, 5.5)
    draw_time_lines(ax, shown, styler=_series_styler)
    common.size_axis(ax, sweep, [c["size"] for cl in shown.values() for c in cl])
    common.seconds_axis(ax)
    ax.legend(fontsize="x-small")
    return common.save(
        fig,
        outdir,
        f"time_{common.slug(group)}_series",
        title,
        f"Median time per iteration of every series measured as {label}"
        + (
            f", beside the fastest {VIEW_STYLE.get(cpu, (None, cpu))[1]} series."
            if cpu and cpu != view
            else "."
        ),
    )


def speedup_chart(doc, outdir, group, sweep):
    points = [
        s
        for s in (results.analysis(doc) or {}).get("speedups", [])
        if s.get("compare_group") == group
    ]
    cpu = preferred_cpu_view({s.get("cpu_view") for s in points})
    curves = {}
    for s in points:
        if s.get("cpu_view") == cpu:
            curves.setdefault((s["view"], s.get("series", "")), []).append(s)
    if not curves:
        return None
    for pts in curves.values():
        pts.sort(key=lambda s: s["size"])
    shown = best_per_view(curves, lambda s: s["size"], lambda s: -s["speedup"])
    title = f"{group}: GPU speedup over {VIEW_STYLE.get(cpu, (None, cpu))[1]}"
    fig, ax = common.new_figure(title, 9, 5.5)
    for (view, series), pts in sorted(shown.items()):
        xs = [s["size"] for s in pts]
        st = view_style(view, series)
        ax.plot(xs, [s["speedup"] for s in pts], markersize=4, label=view_label(view, series), **st)
        ax.fill_between(
            xs,
            [s["speedup_low"] for s in pts],
            [s["speedup_high"] for s in pts],
            color=st["color"],
            alpha=0.12,
            linewidth=0,
        )
    ax.axhline(1.0, color="red", linewidth=1, label="1× (break-even)")
    mark_crossovers(
        ax,
        _drawn([c for c in crossovers_for(doc, group) if c.get("cpu_view") == cpu], shown),
        sweep,
    )
    common.size_axis(ax, sweep, [s["size"] for s in points])
    ax.set_yscale("log")
    common.plain_log_formatter(ax.yaxis)
    ax.set_ylabel("speedup = CPU time / GPU time (log scale)")
    ax.legend(fontsize="x-small")
    others = len(curves) - len(shown)
    return common.save(
        fig,
        outdir,
        f"speedup_{common.slug(group)}",
        title,
        "Above 1×: the GPU is faster; each GPU view's best series"
        + (
            f" ({others} other series: the time detail chart, and `offloadbench summary`)"
            if others
            else ""
        )
        + ". Shaded: from the slowest GPU vs fastest CPU repetition to the reverse.",
    )


def charts(doc, outdir):
    out, missing = [], []
    own = families.families_drawing_own_groups()
    groups = paired_cases(doc, lambda family: family not in own)
    for group, curves in sorted(groups.items()):
        out.append(time_chart(doc, outdir, group, curves))
        detail = detail_time_chart(doc, outdir, group, curves)
        if detail:
            out.append(detail)
        chart = speedup_chart(doc, outdir, group, next(iter(curves.values()))[0]["row"]["sweep"])
        if chart:
            out.append(chart)
        elif results.analysis(doc) is None:
            missing.append(
                f"{group}: speedup vs size needs the analysis block (run offloadbench analyze)"
            )
        else:
            missing.append(
                f"{group}: speedup vs size: no GPU row to pair with the CPU rows"
                + _gpu_reason(doc, group)
            )
    return out, missing


def _gpu_reason(doc, group):
    # GPU rows only (an integer device): a CPU row quick mode skipped is not why no GPU row paired.
    reasons = results.skipped_reasons(
        doc,
        lambda r: (
            r.get("compare_group") == group
            and isinstance(r.get("device"), int)
            and not isinstance(r.get("device"), bool)
        ),
    )
    return f" (GPU rows skipped: {'; '.join(reasons)})" if reasons else ""
