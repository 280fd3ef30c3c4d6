"""Overlap (streams family): the speedup over serial each pipeline configuration achieved, against
the bound it could reach on this device (simpleMultiCopy's model), from the analysis block."""

from plots import common, results

ORDER = 40  # where its charts come in report.html (plots/families.py)
TITLE = "overlap"  # names it in a "could not be drawn" line

MEMORY_COLOR = {"pinned": "tab:blue", "pageable": "tab:orange"}
CASE_ORDER = {"serial": 0, "async": 1, "async_one_stream": 1, "pipelined": 2}


def _count(value):
    """4, not 4.0: stream and chunk counts are whole (a JSON reader may hand them over as floats)."""
    return f"{value:g}" if isinstance(value, (int, float)) else str(value)


def label(entry):
    parts = [str(entry.get(k)) for k in ("case", "case_kind", "kind", "op") if entry.get(k)][:1]
    if entry.get("streams") is not None:
        parts.append(f"K={_count(entry['streams'])}")
    if entry.get("chunks") is not None:
        parts.append(f"C={_count(entry['chunks'])}")
    order = entry.get(
        "issue_order", entry.get("order")
    )  # depth- or breadth-first issue: two bars otherwise alike
    if order:
        parts.append(str(order).replace("_", "-"))
    if entry.get("workload_ratio") is not None:
        parts.append(
            f"ratio {entry['workload_ratio']:g}"
            if isinstance(entry["workload_ratio"], (int, float))
            else f"ratio {entry['workload_ratio']}"
        )
    if isinstance(entry.get("bytes"), (int, float)):
        parts.append(common.binary_size(entry["bytes"], "B"))
    if entry.get("host_memory"):
        parts.append(str(entry["host_memory"]))
    return " ".join(parts) if len(parts) > 1 else entry.get("name", "?")


def _order(entry):
    """Pinned before pageable, then by case, streams, chunks, order (numbers as numbers)."""
    number = lambda key: entry[key] if isinstance(entry.get(key), (int, float)) else -1  # noqa: E731
    case = str(entry.get("case", entry.get("kind", "")))
    return (
        str(entry.get("host_memory", "")) != "pinned",
        CASE_ORDER.get(case, len(CASE_ORDER)),
        case,
        number("workload_ratio"),
        number("bytes"),
        number("streams"),
        number("chunks"),
        str(entry.get("order", "")),
    )


def charts(doc, outdir):
    analysis = results.analysis(doc)
    if analysis is None:
        return [], ["overlap: needs the analysis block (run offloadbench analyze)"]
    entries = [
        e
        for e in analysis.get("overlap", [])
        if isinstance(e.get("speedup_vs_serial"), (int, float))
    ]
    if not entries:
        reasons = results.skipped_reasons(doc, lambda r: r.get("family") == "streams")
        return [], [
            "overlap: no streams rows with a speedup over serial"
            + (f" (skipped: {'; '.join(reasons)})" if reasons else "")
        ]
    entries.sort(key=_order)
    title = "Copy/compute overlap: achieved speedup over serial vs the bound"
    fig, ax = common.new_figure(title, 10, max(4, 0.28 * len(entries) + 1.5))
    ys = range(len(entries))
    colors = [MEMORY_COLOR.get(e.get("host_memory"), "tab:gray") for e in entries]
    ax.barh(list(ys), [e["speedup_vs_serial"] for e in entries], color=colors, alpha=0.8)
    bounds = [
        (y, e["bound_speedup"])
        for y, e in zip(ys, entries)
        if isinstance(e.get("bound_speedup"), (int, float))
    ]
    if bounds:
        ax.scatter(
            [b for _, b in bounds],
            [y for y, _ in bounds],
            marker="|",
            s=200,
            color="black",
            label="bound (no overlap lost)",
            zorder=3,
        )
    for y, e in zip(ys, entries):
        if isinstance(e.get("overlap_efficiency"), (int, float)):
            ax.text(
                e["speedup_vs_serial"],
                y,
                f" {100 * e['overlap_efficiency']:.0f}%",
                va="center",
                fontsize="x-small",
            )
    ax.axvline(1.0, color="red", linewidth=1, label="1× (serial)")
    for memory, color in MEMORY_COLOR.items():
        if any(e.get("host_memory") == memory for e in entries):
            ax.barh([0], [0], color=color, label=f"{memory} host memory")
    ax.set_yticks(list(ys), [label(e) for e in entries], fontsize="x-small")
    ax.invert_yaxis()
    ax.set_xlabel("speedup over serial (×); text: overlap efficiency = achieved gain / bound gain")
    fig.legend(fontsize="x-small", loc="outside lower center", ncol=4)
    return [
        common.save(
            fig,
            outdir,
            "overlap",
            title,
            "Bars: achieved speedup over the serial copy-kernel-copy; black ticks: the bound from the "
            "measured parts and this device's copy engines.",
        )
    ], []
