"""Many small tensors host→device (op small_tensors): time to move N tensors vs N, one line per
method, and the N from which packing them into one pinned staging buffer (packing included) beats
each other method: the analysis block's small_tensors_packing (`offloadbench analyze`); a file
analysed before that section existed gets the same rule computed here."""
from plots import common, results

ORDER = 60  # where its charts come in report.html (plots/families.py)
TITLE = "many small tensors"  # names it in a "could not be drawn" line

METHODS = {"separate_pageable": "N copies from pageable memory", "separate_pinned": "N copies, tensors already pinned",
           "packed_pinned": "pack into pinned staging + 1 copy", "batch_api": "one cudaMemcpyBatchAsync (pageable)"}
PACKED = "packed_pinned"


def _series(doc):
    """{(device, method): [(tensors, median seconds, min, max)]} from the usable rows."""
    out = {}
    for case in results.cases(doc, lambda r: r.get("op") == "small_tensors").values():
        row = case["row"]
        out.setdefault((row.get("device"), row.get("method")), []).append(
            (row["tensors"], case["seconds"], *case["spread"]))
    return {key: sorted(points) for key, points in out.items()}


def packing_crossovers(doc):
    """[{device, versus, tensors}] for every method measured beside packed_pinned; tensors None = never."""
    block = results.analysis(doc)
    if block and isinstance(block.get("small_tensors_packing"), list):
        return [{"device": e.get("device"), "versus": e.get("versus"),
                 "tensors": e.get("size") if e.get("kind") == "crossover" else
                 (e.get("smallest_tensors") if e.get("kind") == "gpu_wins_all" else None),
                 "located": e.get("kind") != "crossover" or bool(e.get("located")),
                 "where": common.crossover_where(e, lambda v: f"{v:.3g}") if e.get("kind") == "crossover" else None}
                for e in block["small_tensors_packing"]]
    series = _series(doc)
    out = []
    for (device, method), points in sorted(series.items(), key=lambda kv: (str(kv[0][0]), str(kv[0][1]))):
        packed = series.get((device, PACKED))
        if method != PACKED and packed:
            out.append({"device": device, "versus": method, "tensors": common.crossover(packed, points)})
    return out


def _parameter_list(doc):
    names = {r.get("parameter_list") for r in doc["benchmarks"] if r.get("op") == "small_tensors"}
    return ", ".join(sorted(n for n in names if n)) or "?"


def charts(doc, outdir):
    series = _series(doc)
    if not series:
        reasons = results.skipped_reasons(doc, lambda r: r.get("op") == "small_tensors")
        return [], ["many small tensors: no small_tensors rows ran" + (f" (skipped: {'; '.join(reasons)})" if reasons else "")]
    drawn = []
    crossings = packing_crossovers(doc)
    for device in sorted({d for d, _ in series}, key=str):
        title = f"GPU {device}: N small tensors host→device — when does packing win?"
        fig, ax = common.new_figure(title)
        counts = []
        for method, label in METHODS.items():
            points = series.get((device, method))
            if not points:
                continue
            xs = [p[0] for p in points]
            counts += xs
            line, = ax.plot(xs, [p[1] for p in points], marker="o", label=label,
                            linewidth=2.5 if method == PACKED else 1.5)
            ax.fill_between(xs, [p[2] for p in points], [p[3] for p in points], color=line.get_color(), alpha=0.15,
                            linewidth=0)
        notes = []
        for c in (c for c in crossings if c["device"] == device):
            name = METHODS.get(c["versus"], c["versus"])
            if c["tensors"] is None:
                notes.append(f"vs {name}: packing does not win in the measured range")
                continue
            where = c.get("where") or f"≈ {c['tensors']:.3g}"
            notes.append(f"vs {name}: packing wins from N {where}")
            if not c.get("located", True):
                continue  # between measured counts far apart: no line at a guessed N
            ax.axvline(c["tensors"], linestyle=":", color="gray")
            ax.annotate(f"N≈{c['tensors']:.3g}", (c["tensors"], 0.02), xycoords=("data", "axes fraction"),
                        rotation=90, fontsize="x-small", va="bottom")
        common.size_axis(ax, "tensors", counts)
        ax.set_xlabel("number of tensors N (log scale)")
        common.seconds_axis(ax, "time to move all N (host wall clock, synchronized)")
        ax.legend(fontsize="small")
        drawn.append(common.save(
            fig, outdir, f"small_tensors_gpu{device}", title,
            f"Sizes drawn (seeded) from {_parameter_list(doc)}; medians of the repetitions, band = min–max. "
            + "; ".join(notes) + "."))
    return drawn, []
