"""GPU x GPU heatmaps of the peer suite, one per nvbandwidth testcase, as nvbandwidth prints its
matrices: row = the GPU that runs the copy (or the chase), column = its peer; per-GPU patterns
(all_to_one, one_to_all, all_to_host, host_to_all) are one row. Cells are the median over the
repetitions of the largest size, in GB/s (latency in ns); N/A where nothing was measured."""

import math
import statistics

from plots import common, results

ORDER = 90  # where its charts come in report.html (plots/families.py)
TITLE = "GPU x GPU (peer)"  # names it in a "could not be drawn" line

PER_GPU = ("all_to_one", "one_to_all", "all_to_host", "host_to_all")


def matrices(doc):
    """[(testcase, pattern, gpus, cells)] with cells[row][column] a number or None, in file order."""
    found = {}
    for row in doc["benchmarks"]:
        if row.get("op") != "peer" or not isinstance(row.get("nvbandwidth"), str):
            continue
        entry = found.setdefault(
            row["nvbandwidth"],
            {"pattern": row.get("pattern"), "gpus": set(), "bytes": 0, "values": {}},
        )
        entry["gpus"].update(g for g in row.get("gpus", []) if isinstance(g, int))
        if not results.usable(row) or not isinstance(row.get("device"), int):
            continue
        latency = entry["pattern"] == "latency"
        value = row.get("latency_ns" if latency else "bytes_per_second")
        if not isinstance(value, (int, float)) or not math.isfinite(value):
            continue
        size = row.get("bytes", 0)
        if size < entry["bytes"]:
            continue
        if size > entry["bytes"]:  # the largest size measured, as nvbandwidth shows one
            entry["bytes"], entry["values"] = size, {}
        cell = (
            (0, row["device"]) if entry["pattern"] in PER_GPU else (row["device"], row.get("peer"))
        )
        entry["values"].setdefault(cell, []).append(value if latency else value / 1e9)
    out = []
    for testcase, entry in found.items():
        if not entry["values"]:
            continue
        gpus = sorted(
            entry["gpus"] | {g for cell in entry["values"] for g in cell[1:] if isinstance(g, int)}
        )
        per_gpu = entry["pattern"] in PER_GPU
        rows = [0] if per_gpu else gpus
        cells = [
            [
                statistics.median(entry["values"][(r, c)]) if (r, c) in entry["values"] else None
                for c in gpus
            ]
            for r in rows
        ]
        out.append((testcase, entry["pattern"], gpus, cells))
    return out


def charts(doc, outdir):
    found = matrices(doc)
    if not found:
        reasons = results.skipped_reasons(doc, lambda r: r.get("op") == "peer")
        if not reasons:
            return [], []  # the peer suite was not run: nothing is missing
        return [], [f"GPU x GPU heatmaps: no peer rows ran (skipped: {'; '.join(reasons)})"]
    drawn = []
    for testcase, pattern, gpus, cells in found:
        latency = pattern == "latency"
        unit = "ns" if latency else "GB/s"
        title = f"{testcase} ({unit})"
        fig, ax = common.new_figure(
            title, width=1.6 + 1.1 * len(gpus), height=1.4 + 1.0 * len(cells)
        )
        ax.grid(False)
        values = [v for line in cells for v in line if v is not None]
        masked = [[math.nan if v is None else v for v in line] for line in cells]
        image = ax.imshow(
            masked,
            cmap="viridis_r" if latency else "viridis",
            vmin=min(values),
            vmax=max(values),
            aspect="auto",
        )
        low, high = min(values), max(values)
        for r, line in enumerate(cells):
            for c, v in enumerate(line):
                text = "N/A" if v is None else f"{v:.0f}" if latency else f"{v:.1f}"
                share = 0.0 if v is None or high == low else (v - low) / (high - low)
                bright = (
                    (share < 0.5) if latency else (share > 0.5)
                )  # the colour map's light end: dark text
                ax.text(
                    c,
                    r,
                    text,
                    ha="center",
                    va="center",
                    fontsize="small",
                    color="gray" if v is None else "black" if bright else "white",
                )
        ax.set_xticks(range(len(gpus)), [f"GPU {g}" for g in gpus])
        per_gpu = pattern in ("all_to_one", "one_to_all", "all_to_host", "host_to_all")
        ax.set_yticks(range(len(cells)), [""] if per_gpu else [f"GPU {g}" for g in gpus])
        ax.set_xlabel(
            "the one GPU"
            if pattern in ("all_to_one", "one_to_all")
            else "measured GPU"
            if per_gpu
            else "peer (column)"
        )
        if not per_gpu:
            ax.set_ylabel("runs it (row)")
        fig.colorbar(image, ax=ax, label=unit)
        drawn.append(
            common.save(
                fig,
                outdir,
                f"peer_{common.slug(testcase)}",
                title,
                "Median over the repetitions; N/A: not measured (the diagonal, a pair without "
                "peer access, or a skipped case). Same cells as nvbandwidth's matrix.",
            )
        )
    return drawn, []
