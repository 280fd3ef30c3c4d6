"""The copy-idiom and pinning-at-scale charts, from the analysis block: PyTorch's copy idioms side by side at one batch (time
per batch, the fixed GPU step marked; results copied back and loss.item() beside), and pinning at scale:
what pinning costs vs size with and without transparent huge pages, the copies after which it pays,
and the host half (first touch) that a machine without a GPU measures too."""

from plots import common, results

ORDER = 100  # where its charts come in report.html (plots/families.py)
TITLE = "PyTorch copy idioms, pinning at scale"  # names it in a "could not be drawn" line

PHRASE = {
    "to_from_pageable": "x.to(device), pageable",
    "pin_memory_fresh": "pin_memory() afresh + non_blocking",
    "pin_memory_cached": "pin_memory() cached + non_blocking",
    "pin_memory_cached_item": "pin_memory() cached + loss.item() each step",
    "pin_thread_pipeline": "DataLoader pin thread",
    "already_pinned": "already pinned + non_blocking",
    "result_to_pageable": "y.cpu(), pageable",
    "result_to_pinned": "y.to('cpu', non_blocking) pinned + sync",
    "item": "loss.item() (D2H + sync)",
}
PIN_LABEL = {
    "host_alloc": "cudaHostAlloc",
    "register_fresh": "cudaHostRegister, untouched",
    "register_touched": "cudaHostRegister, pre-touched",
    "register_chunks": "cudaHostRegister in 256 MiB chunks",
}


def chosen_batch(groups):
    """The batch the bar chart shows: 64 images when measured (the quick suite's), else the largest."""
    batches = [g for g in groups if g.get("direction") == "h2d"]
    if not batches:
        return None
    return next(
        (g for g in batches if g.get("batch_images") == 64), max(batches, key=lambda g: g["bytes"])
    )


def _bars(ax, idioms, scale, unit):
    idioms = sorted(idioms, key=lambda i: -i["seconds"])  # fastest at the top
    y = range(len(idioms))
    values = [i["seconds"] * scale for i in idioms]
    low = [max(0.0, (i["seconds"] - i.get("seconds_low", i["seconds"])) * scale) for i in idioms]
    high = [max(0.0, (i.get("seconds_high", i["seconds"]) - i["seconds"]) * scale) for i in idioms]
    ax.barh(
        list(y),
        values,
        xerr=[low, high],
        color=["tab:green" if k == len(idioms) - 1 else "tab:blue" for k in y],
        capsize=3,
    )
    ax.set_yticks(list(y), [PHRASE.get(i["method"], i["method"]) for i in idioms], fontsize="small")
    for k, v in zip(y, values):
        ax.text(v, k, f" {v:.3g}", va="center", fontsize="x-small")
    ax.set_xlabel(f"time ({unit}, median; bars: min–max of the repetitions)")


def idiom_charts(doc, outdir):
    analysis = results.analysis(doc)
    if analysis is None:
        return [], ["PyTorch copy idioms: needs the analysis block (run offloadbench analyze)"]
    groups = analysis.get("torch_idioms", [])
    if not groups:
        reasons = results.skipped_reasons(doc, lambda r: r.get("op") == "torch_idiom")
        return [], [
            "PyTorch copy idioms: no torch_idiom rows ran"
            + (f" (skipped: {'; '.join(reasons)})" if reasons else "")
        ]
    drawn = []
    for device in sorted({g["device"] for g in groups}, key=str):
        mine = [g for g in groups if g["device"] == device]
        batch = chosen_batch(mine)
        results_back = [g for g in mine if g.get("direction") == "d2h"]
        panels = (batch is not None) + bool(results_back)
        fig, axes = common.plt.subplots(
            panels, 1, figsize=(8, 3 + 2.2 * panels), layout="constrained", squeeze=False
        )
        title = f"GPU {device}: PyTorch's copy idioms"
        fig.suptitle(title)
        row = 0
        if batch is not None:
            ax = axes[row][0]
            _bars(ax, batch["idioms"], 1e3, "ms per batch")
            step = batch.get("gpu_step_s", 0) * 1e3
            if step > 0:
                ax.axvline(
                    step, color="black", linestyle=":", label=f"GPU step alone ({step:g} ms)"
                )
                ax.legend(fontsize="small", loc="best")
            ax.set_title(
                f"batch of {batch.get('batch_images', '?')} × {batch.get('image_shape', '')} "
                f"({common.binary_size(batch['bytes'], 'B')}) to the GPU + a fixed GPU step",
                fontsize="small",
            )
            row += 1
        if results_back:
            ax = axes[row][0]
            # Results of several sizes share the panel: the size goes in each label.
            labelled = [
                dict(
                    i,
                    method=f"{PHRASE.get(i['method'], i['method'])}, {common.binary_size(g['bytes'], 'B')}",
                )
                for g in mine
                if g.get("direction") == "d2h"
                for i in g["idioms"]
            ]
            _bars(ax, labelled, 1e6, "µs per copy")
            ax.set_title(
                "results back to the host, and the synchronize the host waits for", fontsize="small"
            )
        fastest = PHRASE.get(batch["fastest"], batch["fastest"]) if batch else None
        caption = (
            f"Fastest at this batch: {fastest}"
            + (
                f", {batch['margin']:.2f}× ahead of "
                f"{PHRASE.get(batch['runner_up'], batch['runner_up'])}"
                if batch and "margin" in batch
                else ""
            )
            + ". "
            if batch
            else ""
        )
        caption += (
            "Each batch idiom's time is per batch over 8 batches, each followed by the same GPU step (a sum "
            "of the batch checked against the CPU, then a fixed wait), until the last step is done; host wall "
            "clock, what a training loop waits for."
        )
        drawn.append(common.save(fig, outdir, f"torch_idioms_gpu{device}", title, caption))
    return drawn, []


def pinning_scale_charts(doc, outdir):
    analysis = results.analysis(doc)
    if analysis is None:
        return [], ["pinning at scale: needs the analysis block (run offloadbench analyze)"]
    pins, touches = analysis.get("pinning_at_scale", []), analysis.get("first_touch_at_scale", [])
    if not pins and not touches:
        reasons = results.skipped_reasons(
            doc, lambda r: r.get("op") in ("pin_at_scale", "first_touch_at_scale")
        )
        return [], [
            "pinning at scale: no pin_at_scale or first_touch_at_scale rows ran"
            + (f" (skipped: {'; '.join(reasons)})" if reasons else "")
        ]
    thp = sorted({e.get("thp_enabled", "") for e in pins + touches} - {""})
    charts = []
    # One chart per page size (cudaHostAlloc's pages are the driver's: with the 4 KiB ones), so each method
    # keeps one colour and the two page sizes are never drawn alike.
    for huge, stem, pages in (
        ("none", "pinning_at_scale", "4 KiB pages"),
        ("madvise", "pinning_at_scale_thp", "transparent huge pages (madvise)"),
    ):
        chosen = [
            e
            for e in pins
            if e.get("huge_pages") == huge and isinstance(e.get("pin_seconds"), (int, float))
        ]
        touched = [e for e in touches if e.get("huge_pages") == huge]
        if not chosen and not touched:
            continue
        title = f"Pinning at scale, {pages}: cost vs size"
        fig, ax = common.new_figure(title, width=9, height=5.5)
        curves = {}
        for e in chosen:
            curves.setdefault(
                f"GPU {e['device']} {PIN_LABEL.get(e['method'], e['method'])}", []
            ).append(e)
        for index, (label, pts) in enumerate(sorted(curves.items())):
            pts.sort(key=lambda e: e["bytes"])
            colour = f"C{index}"
            ax.plot(
                [e["bytes"] for e in pts],
                [e["pin_seconds"] for e in pts],
                marker="osD^v<>"[index % 7],
                color=colour,
                linestyle=["-", "--", "-.", ":"][index % 4],
                label=label,
            )
            for e in pts:  # the copies after which pinning pays, beside each point
                n = e.get("break_even_copies")
                ax.annotate(
                    f"pays after {n}" if n is not None else "never pays",
                    (e["bytes"], e["pin_seconds"]),
                    fontsize="x-small",
                    textcoords="offset points",
                    xytext=(4, 2),
                    color=colour,
                )
        if touched:
            touched.sort(key=lambda e: e["bytes"])
            fraction = [
                e.get("huge_page_fraction")
                for e in touched
                if isinstance(e.get("huge_page_fraction"), (int, float))
            ]
            spread = sorted({f"{100 * f:.0f}" for f in fraction}, key=float)
            took = (
                f", {'–'.join([spread[0], spread[-1]] if len(spread) > 1 else spread)}% in huge pages"
                if spread
                else ""
            )
            ax.plot(
                [e["bytes"] for e in touched],
                [e["seconds"] for e in touched],
                marker="s",
                color="grey",
                linestyle="-",
                label=f"host first touch{took}",
            )
        common.size_axis(ax, "bytes", [e["bytes"] for e in chosen + touched])
        ax.set_yscale("log")
        common.plain_log_formatter(ax.yaxis)
        ax.set_ylabel("seconds (log scale)")
        ax.legend(fontsize="x-small")
        caption = (
            "Pin cost is the pinning call alone (cudaHostAlloc, or cudaHostRegister of the buffer); beside "
            "each point, the H2D copies of the whole buffer after which pinning it once beats copying it from "
            f"pageable memory each time. Grey: the host half, mapping and first touching fresh pages ({pages}). "
            f"System THP mode: {', '.join(thp) or 'unknown'}."
        )
        charts.append(common.save(fig, outdir, stem, title, caption))
    return charts, []


def charts(doc, outdir):
    drawn, missing = idiom_charts(doc, outdir)
    more, more_missing = pinning_scale_charts(doc, outdir)
    return drawn + more, missing + more_missing
