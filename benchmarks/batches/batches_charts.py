"""What to send over the bus (op batch_to_gpu): time to bring one image batch from host uint8 to a
normalized tensor on the GPU vs batch size, one chart per GPU and image size, one line per placement
and host memory kind, with the batch from which the GPU normalize (fp32) beats a CPU normalize + fp32
copy marked. The crossovers are the analysis block's (`batches`) when the file has one, else the same
rule computed here (plots.common.crossover: interpolated on log batch)."""

from plots import common, results

ORDER = 80  # where its charts come in report.html (plots/families.py)
TITLE = "what to send over the bus"  # names it in a "could not be drawn" line

PLACEMENTS = {
    "cpu_normalize_fp32": "(a) CPU normalize, copy fp32",
    "gpu_normalize_fp32": "(b) copy uint8, GPU normalize → fp32",
    "gpu_normalize_bf16": "(c) copy uint8, GPU normalize → bf16",
    "gpu_normalize_fp16": "(c) copy uint8, GPU normalize → fp16",
}
MEMORY_STYLE = {"pinned": "-", "pageable": "--"}
BASELINE, RACER = "cpu_normalize_fp32", "gpu_normalize_fp32"


def _series(doc):
    """{(device, image): {(placement, memory): [(batch, median s, min s, max s)]}} from the usable rows."""
    out = {}
    for case in results.cases(doc, lambda r: r.get("op") == "batch_to_gpu").values():
        row = case["row"]
        key = (row.get("placement"), row.get("host_memory"))
        out.setdefault((row.get("device"), row.get("image")), {}).setdefault(key, []).append(
            (row["batch"], case["seconds"], *case["spread"])
        )
    return {k: {s: sorted(p) for s, p in v.items()} for k, v in out.items()}


def crossovers(doc):
    """[{device, image, host_memory, batch, first_winning_batch?}] for the fp32 GPU normalize vs (a):
    batch None when it does not win at the largest batch."""
    block = results.analysis(doc)
    if block and isinstance(block.get("batches"), list):
        return [
            {
                "device": e.get("device"),
                "image": e.get("image"),
                "host_memory": e.get("host_memory"),
                "batch": e.get("batch")
                if e.get("kind") == "crossover"
                else (e.get("smallest_batch") if e.get("kind") == "gpu_wins_all" else None),
                "first_winning_batch": e.get("first_winning_batch"),
                "speedup_at_largest": e.get("speedup_at_largest"),
            }
            for e in block["batches"]
            if e.get("placement") == RACER
        ]
    out = []
    for (device, image), lines in sorted(
        _series(doc).items(), key=lambda kv: (str(kv[0][0]), str(kv[0][1]))
    ):
        for memory in MEMORY_STYLE:
            racer, baseline = lines.get((RACER, memory)), lines.get((BASELINE, memory))
            if racer and baseline:
                out.append(
                    {
                        "device": device,
                        "image": image,
                        "host_memory": memory,
                        "batch": common.crossover(racer, baseline),
                        "first_winning_batch": None,
                        "speedup_at_largest": None,
                    }
                )
    return out


def charts(doc, outdir):
    series = _series(doc)
    suites = doc["context"].get("offloadbench", {}).get("suites", [])
    if not series and "batches" not in suites:
        return [], []  # the family was not run: nothing is missing
    if not series:
        reasons = results.skipped_reasons(doc, lambda r: r.get("op") == "batch_to_gpu")
        return [], [
            "what to send over the bus: no batch_to_gpu rows ran"
            + (f" (skipped: {'; '.join(reasons)})" if reasons else "")
        ]
    found = crossovers(doc)
    drawn = []
    for (device, image), lines in sorted(
        series.items(), key=lambda kv: (str(kv[0][0]), str(kv[0][1]))
    ):
        title = f"GPU {device}, {image} batches: normalize before or after the copy?"
        fig, ax = common.new_figure(title)
        batches = []
        for placement, label in PLACEMENTS.items():
            for memory, style in MEMORY_STYLE.items():
                points = lines.get((placement, memory))
                if not points:
                    continue
                xs = [p[0] for p in points]
                batches += xs
                (line,) = ax.plot(
                    xs,
                    [p[1] for p in points],
                    style,
                    marker="o",
                    markersize=3,
                    label=f"{label}, {memory}",
                    linewidth=2.2 if placement in (BASELINE, RACER) else 1.2,
                )
                ax.fill_between(
                    xs,
                    [p[2] for p in points],
                    [p[3] for p in points],
                    color=line.get_color(),
                    alpha=0.12,
                    linewidth=0,
                )
        notes = []
        for c in (c for c in found if c["device"] == device and c["image"] == image):
            memory = c["host_memory"]
            if c["batch"] is None:
                notes.append(f"{memory}: the GPU normalize does not win up to the largest batch")
                continue
            start = c["first_winning_batch"] or c["batch"]
            notes.append(
                f"{memory}: GPU normalize (fp32) wins from batch {start:.3g}"
                + (f" (crossing ≈ {c['batch']:.3g})" if c["first_winning_batch"] else "")
            )
            ax.axvline(
                c["batch"], linestyle=MEMORY_STYLE.get(memory, ":"), color="gray", linewidth=1
            )
            ax.annotate(
                f"crossover ({memory}) ≈ {c['batch']:.3g}",
                (c["batch"], 0.02),
                xycoords=("data", "axes fraction"),
                rotation=90,
                fontsize="x-small",
                va="bottom",
            )
        common.size_axis(ax, "batch", batches)
        common.seconds_axis(ax, "time per batch, host uint8 → normalized on the GPU (synchronized)")
        ax.legend(fontsize="x-small")
        drawn.append(
            common.save(
                fig,
                outdir,
                f"batches_gpu{device}_{common.slug(image)}",
                title,
                "Each point: one batch from host uint8 (HWC) to a normalized CHW tensor on the GPU, host wall clock, "
                "medians of the repetitions, band = min–max; solid = pinned, dashed = pageable host memory. "
                + "; ".join(notes)
                + ".",
            )
        )
    return drawn, []
