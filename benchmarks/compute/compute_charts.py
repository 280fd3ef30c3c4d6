"""The compute family's charts are the generic time and speedup charts of its compare groups
(plots/timing.py); this module says when there are none, and which curves the fleet report draws."""

from plots import fleet_charts, results

ORDER = 21  # right after the generic time and speedup charts
TITLE = "compute"
SGEMM = ("compute/sgemm/square", "compute/sgemm/fp32")  # n×n×n; the second name is older files'
TRIAD = ("compute/triad/fp32",)
FLEET_SWEEPS = [
    (
        "fleet_triad_cpu",
        "triad fp32, CPU all threads",
        fleet_charts.rows("cpu_all", TRIAD),
        fleet_charts.bandwidth,
        "GB/s",
        False,
    ),
    (
        "fleet_triad_gpu",
        "triad fp32, GPU kernel only",
        fleet_charts.rows("gpu_kernel", TRIAD),
        fleet_charts.bandwidth,
        "GB/s",
        True,
    ),
    (
        "fleet_sgemm_cpu",
        "SGEMM n×n×n, CPU all threads (OpenBLAS)",
        fleet_charts.rows("cpu_all", SGEMM),
        fleet_charts.gflops,
        "GFLOP/s",
        True,
    ),
    (
        "fleet_sgemm_gpu",
        "SGEMM n×n×n fp32, GPU kernel only (cuBLAS)",
        fleet_charts.rows("gpu_kernel", SGEMM, ("cuBLAS fp32", "")),
        fleet_charts.gflops,
        "GFLOP/s",
        True,
    ),
]
FLEET_SPEEDUPS = [
    (
        "fleet_speedup_triad",
        "triad fp32: GPU incl. pinned transfers vs CPU all threads",
        TRIAD,
        ("",),
        ("gpu_pinned",),
    ),
    (
        "fleet_speedup_sgemm",
        "SGEMM fp32: GPU incl. pinned transfers vs CPU all threads",
        SGEMM,
        ("cuBLAS fp32", ""),
        ("gpu_pinned",),
    ),
]


def charts(doc, outdir):
    if any(
        str(r.get("compare_group", "")).startswith("compute/")
        for r in doc["benchmarks"]
        if results.usable(r)
    ):
        return [], []
    reasons = results.skipped_reasons(doc, lambda r: r.get("family") == "compute")
    return [], [
        "compute: time and speedup vs size: no compute rows measured"
        + (f" (skipped: {'; '.join(reasons)})" if reasons else "")
    ]
