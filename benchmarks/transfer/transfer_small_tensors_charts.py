"""Many small tensors host→device (op small_tensors): how much faster packing them into one pinned
staging buffer (packing included) is than each other way, vs N (one line per other way, 1× marked),
and the N from which it wins: the analysis block's small_tensors_packing (`offloadbench analyze`); a
file analysed before that section existed gets the same rule computed here."""

from matplotlib import ticker

from plots import common, results

ORDER = 60  # where its charts come in report.html (plots/families.py)
TITLE = "many small tensors"  # names it in a "could not be drawn" line

METHODS = {
    "separate_pageable": "N copies from pageable memory",
    "separate_pinned": "N copies, tensors already pinned",
    "packed_pinned": "pack into pinned staging + 1 copy",
    "batch_api": "one cudaMemcpyBatchAsync (pageable)",
}
PACKED = "packed_pinned"


def _series(doc):
    """{(device, method): [(tensors, median seconds, min, max)]} from the usable rows."""
    out = {}
    for case in results.cases(doc, lambda r: r.get("op") == "small_tensors").values():
        row = case["row"]
        out.setdefault((row.get("device"), row.get("method")), []).append(
            (row["tensors"], case["seconds"], *case["spread"])
        )
    return {key: sorted(points) for key, points in out.items()}


def packing_crossovers(doc):
    """[{device, versus, tensors}] for every method measured beside packed_pinned; tensors None = never."""
    block = results.analysis(doc)
    if block and isinstance(block.get("small_tensors_packing"), list):
        return [
            {
                "device": e.get("device"),
                "versus": e.get("versus"),
                "tensors": e.get("size")
                if e.get("kind") == "crossover"
                else (e.get("smallest_tensors") if e.get("kind") == "gpu_wins_all" else None),
                "located": e.get("kind") != "crossover" or bool(e.get("located")),
                "where": common.crossover_where(e, lambda v: f"{v:.3g}")
                if e.get("kind") == "crossover"
                else None,
            }
            for e in block["small_tensors_packing"]
        ]
    series = _series(doc)
    out = []
    for (device, method), points in sorted(
        series.items(), key=lambda kv: (str(kv[0][0]), str(kv[0][1]))
    ):
        packed = series.get((device, PACKED))
        if method != PACKED and packed:
            out.append(
                {"device": device, "versus": method, "tensors": common.crossover(packed, points)}
            )
    return out


def _parameter_list(doc):
    names = {r.get("parameter_list") for r in doc["benchmarks"] if r.get("op") == "small_tensors"}
    return ", ".join(sorted(n for n in names if n)) or "?"


# Each other way of moving the tensors its own colour, dash and marker.
VERSUS_STYLE = {
    "separate_pageable": dict(color="tab:orange", linestyle="--", marker="s"),
    "separate_pinned": dict(color="tab:blue", linestyle="-", marker="o"),
    "batch_api": dict(color="tab:green", linestyle=":", marker="^"),
}


def _speedups(packed, other):
    """[(N, other's median / packed's median, low, high)] at the counts both measured; low/high pair the
    faster end of one with the slower of the other."""
    by_count = {p[0]: p for p in packed}
    out = []
    for n, seconds, low, high in other:
        if n in by_count and by_count[n][1] > 0 and by_count[n][3] > 0:
            _, packed_s, packed_low, packed_high = by_count[n]
            out.append((n, seconds / packed_s, low / packed_high, high / max(packed_low, 1e-300)))
    return out


def charts(doc, outdir):
    series = _series(doc)
    if not series:
        reasons = results.skipped_reasons(doc, lambda r: r.get("op") == "small_tensors")
        return [], [
            "many small tensors: no small_tensors rows ran"
            + (f" (skipped: {'; '.join(reasons)})" if reasons else "")
        ]
    drawn = []
    crossings = packing_crossovers(doc)
    for device in sorted({d for d, _ in series}, key=str):
        packed = series.get((device, PACKED))
        notes, wins = [], []
        for c in (c for c in crossings if c["device"] == device):
            name = METHODS.get(c["versus"], c["versus"])
            if c["tensors"] is None:
                notes.append(f"vs {name}: packing does not win in the measured range")
                continue
            where = c.get("where") or f"≈ {c['tensors']:.3g}"
            notes.append(f"vs {name}: packing wins from N {where}")
            wins.append(c)
        # The question in the title: from which N packing beats every other way measured.
        if packed and wins and len(wins) == sum(1 for c in crossings if c["device"] == device):
            last = max(wins, key=lambda c: c["tensors"])
            answer = "packing wins from N " + (last.get("where") or f"≈ {last['tensors']:.3g}")
        elif packed and wins:
            answer = "packing wins against some ways, not all"
        else:
            answer = "packing does not win here"
        title = f"GPU {device}: N small tensors host→device — {answer}"
        fig, ax = common.new_figure(title)
        counts = []
        for method, label in METHODS.items():
            points = series.get((device, method))
            if method == PACKED or not points or not packed:
                continue
            ratios = _speedups(packed, points)
            if not ratios:
                continue
            xs = [p[0] for p in ratios]
            counts += xs
            (line,) = ax.plot(
                xs,
                [p[1] for p in ratios],
                label=f"vs {label}",
                **VERSUS_STYLE.get(method, {"marker": "o"}),
            )
            ax.fill_between(
                xs,
                [p[2] for p in ratios],
                [p[3] for p in ratios],
                color=line.get_color(),
                alpha=0.12,
                linewidth=0,
            )
        for c in wins:
            if c.get("located", True):  # between measured counts far apart: no line at a guessed N
                ax.axvline(c["tensors"], linestyle=":", color="gray")
        ax.axhline(1.0, color="red", linewidth=1, label="1× (packing = the other way)")
        common.size_axis(ax, "tensors", counts or [p[0] for p in packed or []])
        ax.set_yscale("log")
        times = ticker.FuncFormatter(lambda v, _: f"{v:g}×")  # 2×, not 2×10⁰
        ax.yaxis.set_major_formatter(times)
        ax.yaxis.set_minor_formatter(times)
        ax.set_xlabel("number of tensors N (log scale)")
        ax.set_ylabel("packing's speedup (above 1×: packing wins)")
        ax.legend(fontsize="small")
        drawn.append(
            common.save(
                fig,
                outdir,
                f"small_tensors_gpu{device}",
                title,
                f"Packing = copy every tensor into one pinned staging buffer, then one copy (packing included). Sizes "
                f"drawn (seeded) from {_parameter_list(doc)}; medians of the repetitions, band = fastest–slowest "
                "pairing. " + "; ".join(notes) + ".",
            )
        )
    return drawn, []
