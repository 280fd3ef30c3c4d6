"""MLP: step time and samples/s vs batch size, per compare_group (network and step kind), with a
line per view (data path) and series (precision); where the GPU step starts to win is marked."""

from plots import common, fleet_charts, results, timing

ORDER = 30  # where its charts come in report.html (plots/families.py)
TITLE = "MLP"  # names it in a "could not be drawn" line
DRAWS_OWN_GROUPS = (
    True  # its batch sweeps are drawn here, not by the generic time and speedup charts
)
MLP_SGD = ("mlp/784-128-10/train_sgd",)
FLEET_SWEEPS = [
    (
        "fleet_mlp_cpu",
        "MLP 784-128-10 SGD training step, CPU all threads",
        fleet_charts.rows("cpu_all", MLP_SGD),
        fleet_charts.step_ms,
        "ms per step",
        True,
    ),
    (
        "fleet_mlp_gpu",
        "MLP 784-128-10 SGD training step fp32, GPU, data resident",
        fleet_charts.rows("gpu_kernel", MLP_SGD, ("fp32 graph", "fp32")),
        fleet_charts.step_ms,
        "ms per step",
        True,
    ),
]
FLEET_SPEEDUPS = [
    (
        "fleet_speedup_mlp",
        "MLP SGD step fp32: GPU incl. pinned transfers (overlapped where measured) vs CPU all "
        "threads",
        MLP_SGD,
        ("fp32 graph", "fp32"),
        ("gpu_pinned_overlap", "gpu_pinned"),
    ),
]


def mlp_chart(doc, outdir, group, curves):
    sweep = next(iter(curves.values()))[0]["row"]["sweep"]
    title = f"{group}: step time and throughput vs {sweep}"
    fig, (ax_time, ax_rate) = common.plt.subplots(1, 2, figsize=(13, 5.5), layout="constrained")
    fig.suptitle(title)
    sizes = [c["size"] for cl in curves.values() for c in cl]
    timing.draw_time_lines(ax_time, curves)
    crossovers = timing.crossovers_for(doc, group)
    timing.mark_crossovers(ax_time, crossovers, sweep)
    common.size_axis(ax_time, sweep, sizes)
    common.seconds_axis(ax_time, "time per step")
    ax_time.set_title("time per training/inference step")
    ax_time.grid(True, alpha=0.3)
    ax_time.legend(fontsize="x-small", loc="upper left")
    timing.draw_time_lines(ax_rate, curves, value=lambda c: c["size"] / c["seconds"])
    timing.mark_crossovers(ax_rate, crossovers, sweep)
    common.size_axis(ax_rate, sweep, sizes)
    ax_rate.set_yscale("log")
    common.si_log_formatter(ax_rate.yaxis)
    ax_rate.set_ylabel("samples per second (log scale)")
    ax_rate.set_title("throughput")
    ax_rate.grid(True, alpha=0.3)
    return common.save(
        fig,
        outdir,
        f"mlp_{common.slug(group)}",
        title,
        "Median of the repetitions"
        + (
            "; dotted: the batch from which each GPU data path beats the CPU."
            if any(c.get("kind") == "crossover" for c in crossovers)
            else "."
        ),
    )


def charts(doc, outdir):
    groups = timing.paired_cases(doc, lambda family: family == "mlp")
    out = [mlp_chart(doc, outdir, group, curves) for group, curves in sorted(groups.items())]
    missing = []
    if not out:
        reasons = results.skipped_reasons(doc, lambda r: r.get("family") == "mlp")
        missing.append(
            "MLP step time vs batch: no mlp rows measured"
            + (f" (skipped: {'; '.join(reasons)})" if reasons else "")
        )
    else:
        for group in sorted(groups):
            sp = timing.speedup_chart(
                doc, outdir, group, next(iter(groups[group].values()))[0]["row"]["sweep"]
            )
            if sp:
                out.append(sp)
    return out, missing
