"""Bandwidth vs size (log-log): one chart per GPU and copy direction, a line per host memory kind,
the fitted latency + bytes/bandwidth model dashed, the link's theoretical rate as a ceiling line;
and the host memcpy baseline (the only transfer chart a CPU-only machine can draw)."""

import numpy

from plots import common, results
from plots import fleet_charts

ORDER = 10  # where its charts come in report.html (plots/families.py)
TITLE = "bandwidth"  # names it in a "could not be drawn" line
FLEET_SWEEPS = [
    (
        "fleet_h2d_pinned",
        "H2D copy, pinned host memory (GPU 0)",
        fleet_charts.rows(op="device_copy", direction="h2d", host_memory="pinned", device=0),
        fleet_charts.bandwidth,
        "GB/s",
        False,
    ),
    (
        "fleet_d2h_pinned",
        "D2H copy, pinned host memory (GPU 0)",
        fleet_charts.rows(op="device_copy", direction="d2h", host_memory="pinned", device=0),
        fleet_charts.bandwidth,
        "GB/s",
        False,
    ),
]

MEMORY_ORDER = ["pinned", "pageable", "registered", "write_combined"]
# Pinned, registered and write-combined copies run at the same rate over a link: each its own colour,
# dash and marker, and pinned drawn on top with the largest marker, so that none hides another.
MEMORY_STYLE = {
    "pinned": dict(color="tab:blue", linestyle="-", marker="o", markersize=7, zorder=5),
    "pageable": dict(color="tab:orange", linestyle="--", marker="s", markersize=5, zorder=4),
    "registered": dict(color="tab:green", linestyle=":", marker="^", markersize=6, zorder=3),
    "write_combined": dict(color="tab:purple", linestyle="-.", marker="x", markersize=8, zorder=2),
}


def _rate_points(case_list, x_key="bytes"):
    points = []
    for case in case_list:
        rates = [
            r["bytes_per_second"]
            for r in case["rows"]
            if isinstance(r.get("bytes_per_second"), (int, float))
        ]
        if rates:
            rates.sort()
            points.append((case["row"][x_key], rates[len(rates) // 2], rates[0], rates[-1]))
    return sorted(points)


def _plot_rates(ax, points, label, **style):
    xs = [p[0] for p in points]
    (line,) = ax.plot(xs, [p[1] / 1e9 for p in points], label=label, **{"marker": "o", **style})
    ax.fill_between(
        xs,
        [p[2] / 1e9 for p in points],
        [p[3] / 1e9 for p in points],
        color=line.get_color(),
        alpha=0.15,
        linewidth=0,
    )
    return line


def _link_rate(doc, device):
    for gpu in doc["context"].get("cuda", {}).get("gpus", []):
        if gpu.get("index") == device:
            link = gpu.get("pcie_link", {})
            rate = link.get("theoretical_bytes_per_second") or 0
            label = f"PCIe Gen{link.get('current_generation')} x{link.get('current_width')}"
            return rate, label
    return 0, ""


def device_copy_charts(doc, outdir):
    copies = results.cases(
        doc, lambda r: r.get("op") == "device_copy" and isinstance(r.get("device"), int)
    )
    groups = {}
    for case in copies.values():
        row = case["row"]
        groups.setdefault((row["device"], row.get("direction", "?")), {}).setdefault(
            row.get("host_memory", "?"), []
        ).append(case)
    fits = {
        (f.get("device"), f.get("direction"), f.get("host_memory")): f
        for f in (results.analysis(doc) or {}).get("transfer_model", [])
        if f.get("ok")
    }
    charts = []
    direction_order = {"h2d": 0, "d2h": 1, "bidirectional": 2}
    for (device, direction), by_memory in sorted(
        groups.items(), key=lambda g: (g[0][0], direction_order.get(g[0][1], 3))
    ):
        directions = 2 if direction == "bidirectional" else 1
        title = f"GPU {device} {direction.upper() if directions == 1 else 'bidirectional (H2D+D2H)'} copy bandwidth vs size"
        fig, ax = common.new_figure(title)
        sizes = []
        for memory in sorted(
            by_memory, key=lambda m: MEMORY_ORDER.index(m) if m in MEMORY_ORDER else 9
        ):
            points = _rate_points(by_memory[memory])
            sizes += [p[0] for p in points]
            line = _plot_rates(ax, points, f"{memory} (measured)", **MEMORY_STYLE.get(memory, {}))
            fit = fits.get((device, direction, memory))
            if fit and points:
                a, b = fit["alpha_seconds"], fit["beta_bytes_per_second"]
                xs = numpy.geomspace(points[0][0], points[-1][0], 64)
                ax.plot(
                    xs,
                    [x * directions / (a + x * directions / b) / 1e9 for x in xs],
                    linestyle="--",
                    color=line.get_color(),
                    alpha=0.8,
                    label=f"{memory} fit: {a * 1e6:.1f} µs + bytes / {b / 1e9:.1f} GB/s (R² {fit['r_squared']:.3f})",
                )
        rate, link_label = _link_rate(doc, device)
        if rate > 0:
            ax.axhline(
                rate * directions / 1e9,
                color="black",
                linestyle=":",
                label=f"{link_label} theoretical",
            )
        common.size_axis(ax, "bytes", sizes)
        ax.set_xlabel("bytes per direction (binary multiples)")
        ax.set_yscale("log")
        common.plain_log_formatter(ax.yaxis)
        ax.set_ylabel("bandwidth (GB/s, decimal; log scale)")
        ax.legend(fontsize="small", loc="lower right")
        stem = f"bandwidth_gpu{device}_{direction}"
        charts.append(
            common.save(
                fig,
                outdir,
                stem,
                title,
                "Median of the repetitions; the shaded band is their range. Bandwidth from CUDA "
                "events per copy; dashed: the fitted transfer model.",
            )
        )
    missing = []
    if not charts:
        reasons = results.skipped_reasons(doc, lambda r: r.get("op") == "device_copy")
        missing.append(
            "GPU copy bandwidth vs size: no device copies measured"
            + (f" (skipped: {'; '.join(reasons)})" if reasons else "")
        )
    return charts, missing


def host_memcpy_chart(doc, outdir):
    copies = results.cases(doc, lambda r: r.get("op") == "host_memcpy")
    if not copies:
        return [], ["host memcpy bandwidth: no host_memcpy rows in this file"]
    title = "Host memcpy bandwidth vs size (CPU baseline)"
    fig, ax = common.new_figure(title)
    series = {}
    for case in copies.values():
        row = case["row"]
        label = f"{row.get('touch', '?')}, {row.get('cpu_threads', '?')} thread(s)"
        series.setdefault(label, []).append(case)
    sizes = []
    for label, case_list in sorted(series.items()):
        points = _rate_points(case_list)
        sizes += [p[0] for p in points]
        _plot_rates(ax, points, label)
    common.size_axis(ax, "bytes", sizes)
    ax.set_yscale("log")
    common.plain_log_formatter(ax.yaxis)
    ax.set_ylabel("bandwidth (GB/s, read + write counted; log scale)")
    ax.legend(fontsize="small")
    return [
        common.save(
            fig,
            outdir,
            "bandwidth_host_memcpy",
            title,
            "memcpy between two host buffers, counted as 2·bytes (read + write) as BabelStream's copy; "
            "first_touch includes the page faults of a fresh destination.",
        )
    ], []


def charts(doc, outdir):
    a, ma = device_copy_charts(doc, outdir)
    b, mb = host_memcpy_chart(doc, outdir)
    return a + b, ma + mb
