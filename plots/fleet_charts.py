"""The fleet report's charts: one series per machine, a table of what each chart draws. A machine
with nothing to draw in a chart (no GPU, or the case not run) is named in that chart's caption."""
from . import results
from .common import new_figure, plain_log_formatter, save, size_axis

GB = 1e9


def _rows(op, view=None, series="", **fields):
    def pick(row):
        return (row.get("op") == op and (view is None or row.get("view") == view) and row.get("series", "") == series
                and all(row.get(k) == v for k, v in fields.items()))
    return pick


# (stem, title, rows, y value of a case, y label, log y axis)
SWEEPS = [
    ("fleet_h2d_pinned", "H2D copy, pinned host memory (GPU 0)",
     _rows("device_copy", direction="h2d", host_memory="pinned", device=0),
     lambda c: results.median_field(c, "bytes_per_second") / GB, "GB/s", False),
    ("fleet_d2h_pinned", "D2H copy, pinned host memory (GPU 0)",
     _rows("device_copy", direction="d2h", host_memory="pinned", device=0),
     lambda c: results.median_field(c, "bytes_per_second") / GB, "GB/s", False),
    ("fleet_triad_cpu", "triad fp32, CPU all threads", _rows("triad", "cpu_all", compare_group="compute/triad/fp32"),
     lambda c: results.median_field(c, "bytes_per_second") / GB, "GB/s", False),
    ("fleet_triad_gpu", "triad fp32, GPU kernel only", _rows("triad", "gpu_kernel", compare_group="compute/triad/fp32"),
     lambda c: results.median_field(c, "bytes_per_second") / GB, "GB/s", True),
    ("fleet_sgemm_cpu", "SGEMM n×n×n, OpenBLAS, CPU all threads",
     _rows("sgemm", "cpu_all", compare_group="compute/sgemm/square"),
     lambda c: results.median_field(c, "flop_per_second") / 1e9, "GFLOP/s", True),
    ("fleet_sgemm_gpu", "SGEMM n×n×n, cuBLAS fp32, GPU kernel only",
     _rows("sgemm", "gpu_kernel", series="cuBLAS fp32", compare_group="compute/sgemm/square"),
     lambda c: results.median_field(c, "flop_per_second") / 1e9, "GFLOP/s", True),
    ("fleet_mlp_cpu", "MLP 784-128-10 SGD training step, CPU all threads",
     _rows("mlp_step", "cpu_all", compare_group="mlp/784-128-10/train_sgd"), lambda c: c["seconds"] * 1e3,
     "ms per step", True),
    ("fleet_mlp_gpu", "MLP 784-128-10 SGD training step, GPU fp32 graph, data resident",
     _rows("mlp_step", "gpu_kernel", series="fp32 graph", compare_group="mlp/784-128-10/train_sgd"),
     lambda c: c["seconds"] * 1e3, "ms per step", True),
]

# (stem, title, compare group, series): the GPU's speedup over all CPU threads per size, pinned transfers
SPEEDUPS = [
    ("fleet_speedup_triad", "triad fp32: GPU incl. pinned transfers vs CPU all threads", "compute/triad/fp32", ""),
    ("fleet_speedup_sgemm", "SGEMM cuBLAS fp32: GPU incl. pinned transfers vs CPU all threads", "compute/sgemm/square",
     "cuBLAS fp32"),
    ("fleet_speedup_mlp", "MLP SGD step fp32 graph: GPU, pinned transfers overlapped, vs CPU all threads",
     "mlp/784-128-10/train_sgd", "fp32 graph"),
]


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
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", markersize=3, label=label)
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


def _speedup_chart(docs, labels, outdir, stem, title, group, series):
    fig, ax = new_figure(title)
    drawn, absent, sweep, xs = 0, [], "bytes", []
    for doc, label in zip(docs, labels):
        points = sorted((s["size"], s["speedup"]) for s in (results.analysis(doc) or {}).get("speedups", [])
                        if s.get("compare_group") == group and s.get("series", "") == series
                        and s.get("cpu_view") == "cpu_all"
                        and s.get("view") == ("gpu_pinned_overlap" if group.startswith("mlp/") else "gpu_pinned"))
        if not points:
            absent.append(label)
            continue
        sweep = next(s.get("sweep") for s in results.analysis(doc)["speedups"] if s.get("compare_group") == group)
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", markersize=3, label=label)
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
    for stem, title, pick, value, ylabel, log_y in SWEEPS:
        chart, why = _sweep_chart(docs, labels, outdir, stem, title, pick, value, ylabel, log_y)
        (drawn.append(chart) if chart else missing.append(why))
    for stem, title, group, series in SPEEDUPS:
        chart, why = _speedup_chart(docs, labels, outdir, stem, title, group, series)
        (drawn.append(chart) if chart else missing.append(why))
    return drawn, missing
