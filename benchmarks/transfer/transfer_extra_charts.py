"""The transfers beyond copy-engine copies, one chart each per GPU: device-local copies against the
DRAM peak, SM-initiated (zero-copy) copies beside the copy engine's pinned copies against the link,
host data reaching a kernel through managed memory vs explicit copies, and latency in ns."""

import transfer_bandwidth_charts as bandwidth
from plots import common, results

ORDER = 70  # where its charts come in report.html (plots/families.py)
TITLE = "device-local, SM-initiated, managed, latency"  # names it in a "could not be drawn" line


def _gpu_field(doc, device, key):
    for gpu in doc["context"].get("cuda", {}).get("gpus", []):
        if gpu.get("index") == device:
            return gpu.get(key) or 0
    return 0


def _by_device(doc, predicate, series_of):
    """{device: {series label: [case, ...]}} over the usable rows `predicate` selects."""
    out = {}
    for case in results.cases(doc, predicate).values():
        row = case["row"]
        out.setdefault(row.get("device"), {}).setdefault(series_of(row), []).append(case)
    return out


def _bandwidth_chart(doc, outdir, stem, title, groups, ceiling, ceiling_label, ylabel, caption):
    fig, ax = common.new_figure(title)
    sizes = []
    for label, case_list in sorted(groups.items()):
        points = bandwidth._rate_points(case_list)  # (bytes, median, min, max) of bytes_per_second
        sizes += [p[0] for p in points]
        bandwidth._plot_rates(ax, points, label)
    if ceiling > 0:
        ax.axhline(ceiling / 1e9, color="black", linestyle=":", label=ceiling_label)
    common.size_axis(ax, "bytes", sizes)
    ax.set_yscale("log")
    common.plain_log_formatter(ax.yaxis)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize="small", loc="lower right")
    return common.save(fig, outdir, stem, title, caption)


def _missing(doc, what, op):
    reasons = results.skipped_reasons(doc, lambda r: r.get("op") == op)
    return f"{what}: no {op} rows ran" + (f" (skipped: {'; '.join(reasons)})" if reasons else "")


def device_local_charts(doc, outdir):
    groups = _by_device(
        doc, lambda r: r.get("op") == "device_local_copy", lambda r: f"{r.get('initiator')} copy"
    )
    drawn = [
        _bandwidth_chart(
            doc,
            outdir,
            f"device_local_gpu{d}",
            f"GPU {d} device-local copy bandwidth vs size",
            g,
            _gpu_field(doc, d, "dram_bytes_per_second"),
            "DRAM theoretical peak",
            "bandwidth (GB/s, read + write counted; log scale)",
            "D2D on one GPU, counted as read + write (2·bytes) so it compares with the DRAM peak; "
            "nvbandwidth's device_local_copy prints half of this (bytes copied / time).",
        )
        for d, g in sorted(groups.items(), key=lambda kv: str(kv[0]))
    ]
    return drawn, [] if drawn else [_missing(doc, "device-local copies", "device_local_copy")]


def sm_copy_charts(doc, outdir):
    def series(r):
        who = "SM (zero-copy kernel)" if r.get("op") == "sm_copy" else "copy engine, pinned"
        return r.get("direction"), who

    groups = _by_device(
        doc,
        lambda r: (
            r.get("op") == "sm_copy"
            or (
                r.get("op") == "device_copy"
                and r.get("host_memory") == "pinned"
                and r.get("direction") in ("h2d", "d2h")
            )
        ),
        series,
    )
    drawn = []
    for device, by_series in sorted(groups.items(), key=lambda kv: str(kv[0])):
        for direction in ("h2d", "d2h"):
            lines = {who: cases for (d, who), cases in by_series.items() if d == direction}
            if not any(who.startswith("SM") for who in lines):
                continue
            rate, link_label = bandwidth._link_rate(doc, device)
            drawn.append(
                _bandwidth_chart(
                    doc,
                    outdir,
                    f"sm_copy_gpu{device}_{direction}",
                    f"GPU {device} {direction.upper()}: SM-initiated vs copy-engine copies",
                    lines,
                    rate,
                    f"{link_label} theoretical",
                    "bandwidth (GB/s, decimal; log scale)",
                    "A kernel reading (H2D) or writing (D2H) mapped pinned host memory beside cudaMemcpyAsync "
                    "from pinned memory, bytes per direction.",
                )
            )
    return drawn, [] if drawn else [_missing(doc, "SM-initiated copies", "sm_copy")]


def managed_charts(doc, outdir):
    groups = _by_device(doc, lambda r: r.get("op") == "managed", lambda r: r.get("variant"))
    drawn = [
        _bandwidth_chart(
            doc,
            outdir,
            f"managed_gpu{d}",
            f"GPU {d}: host data consumed by a kernel",
            g,
            bandwidth._link_rate(doc, d)[0],
            "link theoretical",
            "effective bandwidth (GB/s: bytes / time to reach the kernel; log scale)",
            "The host writes the buffer, then managed memory (migrating on fault, or prefetched) "
            "or an explicit copy from pinned or pageable memory brings it to a kernel that reads "
            "every byte; time includes the kernel.",
        )
        for d, g in sorted(groups.items(), key=lambda kv: str(kv[0]))
    ]
    return drawn, [] if drawn else [_missing(doc, "managed memory", "managed")]


def latency_charts(doc, outdir):
    cases = results.cases(doc, lambda r: r.get("op") == "latency")
    by_device = {}
    for case in cases.values():
        value = results.median_field(case, "latency_ns")
        if value:
            by_device.setdefault(case["row"].get("device"), []).append(
                (case["row"].get("probe", "?"), value)
            )
    drawn = []
    for device, bars in sorted(by_device.items(), key=lambda kv: str(kv[0])):
        bars.sort(key=lambda b: b[1])
        title = f"GPU {device} host↔device latency"
        fig, ax = common.new_figure(title, height=3.5)
        ax.barh([b[0] for b in bars], [b[1] for b in bars])
        for i, (_, ns) in enumerate(bars):
            ax.annotate(f" {ns:,.0f} ns", (ns, i), va="center", fontsize="small")
        ax.set_xscale("log")
        ax.set_xlabel("latency (ns, log scale)")
        drawn.append(
            common.save(
                fig,
                outdir,
                f"latency_gpu{device}",
                title,
                "Pointer chase: one dependent 8-byte load at a time from a kernel (as nvbandwidth's "
                "host_device_latency_sm), per load. Round trip: a 1-byte cudaMemcpyAsync + "
                "cudaStreamSynchronize, host wall clock.",
            )
        )
    return drawn, [] if drawn else [_missing(doc, "latency", "latency")]


def charts(doc, outdir):
    drawn, missing = [], []
    for family in (device_local_charts, sm_copy_charts, managed_charts, latency_charts):
        d, m = family(doc, outdir)
        drawn += d
        missing += m
    return drawn, missing
