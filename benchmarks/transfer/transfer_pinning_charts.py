"""Pinning break-even: how many copies of a given size it takes before pinning the buffer once
(its measured cost) plus pinned copies beats copying from pageable memory every time."""

from plots import common, results

ORDER = 50  # where its charts come in report.html (plots/families.py)
TITLE = "pinning break-even"  # names it in a "could not be drawn" line

SHORT = {
    "cudaHostAlloc+cudaFreeHost": "cudaHostAlloc",
    "cudaHostRegister+cudaHostUnregister": "cudaHostRegister",
}


def charts(doc, outdir):
    analysis = results.analysis(doc)
    if analysis is None:
        return [], ["pinning break-even: needs the analysis block (run offloadbench analyze)"]
    entries = analysis.get("pinning_break_even", [])
    if not entries:
        reasons = results.skipped_reasons(doc, lambda r: r.get("op") in ("pin_cost", "device_copy"))
        return [], [
            "pinning break-even: needs pin_cost and pageable/pinned device_copy rows of the same sizes"
            + (f" (skipped: {'; '.join(reasons)})" if reasons else "")
        ]
    title = "Pinning break-even: copies after which pinning once pays"
    fig, ax = common.new_figure(title)
    curves = {}
    for e in entries:
        key = (
            e.get("device"),
            SHORT.get(e.get("pin_operation"), e.get("pin_operation")),
            e.get("direction"),
        )
        curves.setdefault(key, []).append(e)
    never = []
    for (device, operation, direction), pts in sorted(curves.items()):
        pts.sort(key=lambda e: e["bytes"])
        paying = [e for e in pts if isinstance(e.get("break_even_copies"), (int, float))]
        never += [
            f"{operation} {direction} {common.binary_size(e['bytes'], 'B')}"
            for e in pts
            if e not in paying
        ]
        ax.plot(
            [e["bytes"] for e in paying],
            [e["break_even_copies"] for e in paying],
            marker="o" if direction == "h2d" else "s",
            markerfacecolor="none" if direction != "h2d" else None,
            linestyle="-" if direction == "h2d" else "--",
            label=f"GPU {device} {operation}, {direction.upper()}",
        )
    common.size_axis(ax, "bytes", [e["bytes"] for e in entries])
    ax.set_xlabel("buffer size (bytes, binary multiples)")
    ax.set_yscale("log")
    common.plain_log_formatter(ax.yaxis)
    ax.set_ylabel("copies until pinning pays (log scale)")
    if never:
        ax.text(
            0.01,
            0.01,
            "never pays (pinned not faster): "
            + ", ".join(never[:6])
            + (" …" if len(never) > 6 else ""),
            transform=ax.transAxes,
            fontsize="x-small",
            va="bottom",
        )
    ax.legend(fontsize="small")
    return [
        common.save(
            fig,
            outdir,
            "pinning_break_even",
            title,
            "Smallest n with pin cost + n·pinned copy < n·pageable copy, from the medians of the "
            "repetitions.",
        )
    ], []
