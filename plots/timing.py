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


# Rows another library measured (scripts/cpu_anchors.py, scripts/gpu_anchors.py): a colour of their
# own, so they never read as one of offloadbench's views.
ANCHOR_STYLE = {"pytorch": ("tab:red", "PyTorch"), "numpy": ("tab:brown", "numpy")}


def view_label(view, series):
    label = VIEW_STYLE.get(view, (None, view))[1]
    if series in ANCHOR_STYLE:
        return f"{ANCHOR_STYLE[series][1]}: {label.replace('GPU kernel only', 'GPU, data resident')}"
    return f"{label} [{series}]" if series else label


def style(view, series_index, series=""):
    """Colour by view, dashes and then markers by series: no two series of one view look alike."""
    if series in ANCHOR_STYLE:
        return {"color": ANCHOR_STYLE[series][0], "linestyle": ":" if view.startswith("cpu") else "-", "marker": "o"}
    color = VIEW_STYLE.get(view, ("tab:cyan", view))[0]
    if view.startswith("cpu"):  # offloadbench's own CPU rows dashed; other CPU series (PyTorch, numpy anchors) dotted
        return {"color": color, "linestyle": "--" if series_index == 0 else ":",
                "marker": SERIES_MARKERS[series_index % len(SERIES_MARKERS)]}
    return {"color": color, "linestyle": SERIES_STYLE[series_index % len(SERIES_STYLE)],
            "marker": SERIES_MARKERS[(series_index // len(SERIES_STYLE)) % len(SERIES_MARKERS)]}


def paired_cases(doc, family_filter):
    """{compare_group: {(view, series): [case, ...] sorted by size}} for rows with pairing fields."""
    groups = {}
    for case in results.cases(doc, lambda r: r.get("compare_group") and r.get("view") and r.get("sweep")).values():
        row = case["row"]
        if not family_filter(row.get("family", "")) or not isinstance(row.get(row["sweep"]), (int, float)):
            continue
        case["size"] = row[row["sweep"]]
        groups.setdefault(row["compare_group"], {}).setdefault((row["view"], row.get("series", "")), []).append(case)
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
    found = [c for c in (results.analysis(doc) or {}).get("crossovers", []) if c.get("compare_group") == group]
    cpu = preferred_cpu_view({c.get("cpu_view") for c in found})
    return [c for c in found if c.get("cpu_view") == cpu]


def draw_time_lines(ax, curves, value=lambda case: case["seconds"]):
    series_index = {}
    for (view, series), case_list in sorted(curves.items()):
        index = series_index.setdefault(series, len(series_index))
        xs = [c["size"] for c in case_list]
        ax.plot(xs, [value(c) for c in case_list], markersize=4, label=view_label(view, series),
                **style(view, index, series))


def mark_crossovers(ax, crossovers, sweep):
    for c in crossovers:
        if c.get("kind") != "crossover" or not c.get("size"):
            continue
        color = VIEW_STYLE.get(c["view"], ("tab:red", ""))[0]
        ax.axvline(c["size"], color=color, linestyle=":", linewidth=1.2,
                   label=f"crossover {view_label(c['view'], c.get('series', ''))}: "
                         f"{common.sweep_size(sweep, c['size'])}")
        if c.get("low") and c.get("high"):
            ax.axvspan(c["low"], c["high"], color=color, alpha=0.08)


def _no_crossover_note(ax, crossovers, sweep):
    notes = []
    for c in crossovers:
        if c.get("kind") == "cpu_wins_at_largest":
            notes.append(f"{view_label(c['view'], c.get('series', ''))}: never wins up to "
                         f"{common.sweep_size(sweep, c['largest_size'])}")
        elif c.get("kind") == "gpu_wins_all":
            notes.append(f"{view_label(c['view'], c.get('series', ''))}: wins at every measured size")
    if notes:
        ax.text(0.01, 0.99, "\n".join(notes), transform=ax.transAxes, va="top", fontsize="x-small",
                bbox={"facecolor": "white", "alpha": 0.8, "edgecolor": "none"})


def time_chart(doc, outdir, group, curves):
    sweep = next(iter(curves.values()))[0]["row"]["sweep"]
    title = f"{group}: time vs {sweep}"
    fig, ax = common.new_figure(title, 9, 5.5)
    draw_time_lines(ax, curves)
    crossovers = crossovers_for(doc, group)
    mark_crossovers(ax, crossovers, sweep)
    _no_crossover_note(ax, crossovers, sweep)
    if not any(view.startswith("gpu") for view, _ in curves):
        ax.text(0.01, 0.99, "no GPU rows" + _gpu_reason(doc, group).replace(" (GPU rows skipped:", ":").rstrip(")"),
                transform=ax.transAxes, va="top", fontsize="x-small", wrap=True,
                bbox={"facecolor": "white", "alpha": 0.8, "edgecolor": "none"})
    common.size_axis(ax, sweep, [c["size"] for cl in curves.values() for c in cl])
    common.seconds_axis(ax)
    ax.legend(fontsize="x-small", loc="lower right")
    cpu = crossovers[0]["cpu_view"] if crossovers else "the CPU"
    return common.save(fig, outdir, f"time_{common.slug(group)}", title,
                       f"Median time per iteration; dotted lines: where each GPU view starts to beat {cpu} "
                       "(shaded: the range the repetitions allow).")


def speedup_chart(doc, outdir, group, sweep):
    points = [s for s in (results.analysis(doc) or {}).get("speedups", []) if s.get("compare_group") == group]
    cpu = preferred_cpu_view({s.get("cpu_view") for s in points})
    curves = {}
    for s in points:
        if s.get("cpu_view") == cpu:
            curves.setdefault((s["view"], s.get("series", "")), []).append(s)
    if not curves:
        return None
    title = f"{group}: GPU speedup over {VIEW_STYLE.get(cpu, (None, cpu))[1]}"
    fig, ax = common.new_figure(title, 9, 5.5)
    series_index = {}
    for (view, series), pts in sorted(curves.items()):
        pts.sort(key=lambda s: s["size"])
        xs = [s["size"] for s in pts]
        st = style(view, series_index.setdefault(series, len(series_index)), series)
        ax.plot(xs, [s["speedup"] for s in pts], markersize=4, label=view_label(view, series), **st)
        ax.fill_between(xs, [s["speedup_low"] for s in pts], [s["speedup_high"] for s in pts], color=st["color"],
                        alpha=0.12, linewidth=0)
    ax.axhline(1.0, color="red", linewidth=1, label="1× (break-even)")
    mark_crossovers(ax, [c for c in crossovers_for(doc, group) if c.get("cpu_view") == cpu], sweep)
    common.size_axis(ax, sweep, [s["size"] for s in points])
    ax.set_yscale("log")
    common.plain_log_formatter(ax.yaxis)
    ax.set_ylabel("speedup = CPU time / GPU time (log scale)")
    ax.legend(fontsize="x-small")
    return common.save(fig, outdir, f"speedup_{common.slug(group)}", title,
                       "Above 1×: the GPU is faster. Shaded: from the slowest GPU vs fastest CPU repetition to the "
                       "reverse.")


def charts(doc, outdir):
    out, missing = [], []
    own = families.families_drawing_own_groups()
    groups = paired_cases(doc, lambda family: family not in own)
    for group, curves in sorted(groups.items()):
        out.append(time_chart(doc, outdir, group, curves))
        chart = speedup_chart(doc, outdir, group, next(iter(curves.values()))[0]["row"]["sweep"])
        if chart:
            out.append(chart)
        elif results.analysis(doc) is None:
            missing.append(f"{group}: speedup vs size needs the analysis block (run offloadbench analyze)")
        else:
            missing.append(f"{group}: speedup vs size: no GPU row to pair with the CPU rows"
                           + _gpu_reason(doc, group))
    return out, missing


def _gpu_reason(doc, group):
    reasons = results.skipped_reasons(doc, lambda r: r.get("compare_group") == group)
    return f" (GPU rows skipped: {'; '.join(reasons)})" if reasons else ""

