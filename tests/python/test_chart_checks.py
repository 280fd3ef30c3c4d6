"""Every chart answers at a glance (issue 53): at most common.MAX_SERIES series per axes, no legend
over the data, no tick labels running into each other, checked on matplotlib's own extents. Drawn
from the H100 reference file, the synthetic GPU fixture and a CPU-only run, each analysed first as
`offloadbench plot` does; and the check itself fails on charts that break each rule."""

import shutil
import subprocess
import sys

import pytest

from conftest import ROOT
from test_plots import CPU_FIXTURE, GPU_FIXTURE

matplotlib = pytest.importorskip("matplotlib")
sys.path.insert(0, str(ROOT))
from plots import common, results  # noqa: E402
from plots.__main__ import chart_families  # noqa: E402

H100 = ROOT / "results" / "reference" / "nvidia-h100-80gb-hbm3-2026-11-26-quick.json"


def _analysed(offloadbench_bin, source, folder):
    copy = folder / source.name
    shutil.copyfile(source, copy)
    done = subprocess.run(
        [offloadbench_bin, "analyze", copy], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    return results.load(copy)


@pytest.mark.parametrize(
    "source", [H100, GPU_FIXTURE, CPU_FIXTURE], ids=["h100", "gpu_synthetic", "cpu_only"]
)
def test_every_chart_passes_the_checks(offloadbench_bin, tmp_path, source):
    doc = _analysed(offloadbench_bin, source, tmp_path)
    drawn = []
    for _, module in chart_families():
        charts, _ = module.charts(doc, tmp_path)
        drawn += charts
    assert drawn
    problems = {c["png"]: c["problems"] for c in drawn if c["problems"]}
    assert problems == {}


def _figure(lines, legend_inside=False):
    fig, ax = common.new_figure("test")
    for i in range(lines):
        ax.plot([1, 2, 3], [i, i + 1, i], label=f"series {i}")
    if legend_inside:
        ax.legend(loc="center")
    return fig


def test_the_check_fails_on_crowded_charts():
    assert common.chart_problems(_figure(8)) == []
    assert common.chart_problems(_figure(9)) == ["test: 9 series (at most 8)"]
    assert "test: the legend covers the data area" in common.chart_problems(
        _figure(3, legend_inside=True)
    )
    fig = _figure(1)
    ax = fig.axes[0]
    ax.set_xticks([1.0, 1.01, 1.02], ["3×10³", "4×10³", "5×10³"])
    assert "test: x tick labels overlap" in common.chart_problems(fig)


def test_save_moves_the_legend_out_and_marks_a_lone_point(tmp_path):
    fig = _figure(3, legend_inside=True)
    (lone,) = fig.axes[0].plot([2], [1], label="one point")
    record = common.save(fig, tmp_path, "chart", "test")
    assert record["problems"] == []
    assert lone.get_marker() == "o"


def test_views_and_series_each_have_their_own_colour_and_dash():
    """bf16 and fp16 once shared a style: in the main charts each view differs from every other in
    colour, dash and marker; in the detail charts so does each of up to MAX_SERIES series."""
    from plots import timing

    views = ["gpu_kernel", "gpu_pinned", "gpu_pageable", "gpu_pinned_overlap", "cpu_1t", "cpu_all"]
    for key in ("color", "linestyle", "marker"):
        assert len({str(timing.view_style(v)[key]) for v in views}) == len(views), key
        assert len({str(timing.series_style(i)[key]) for i in range(4)}) == 4, key
    looks = {
        (s["color"], s["linestyle"], s["marker"])
        for s in map(timing.series_style, range(common.MAX_SERIES))
    }
    assert len(looks) == common.MAX_SERIES


def test_the_main_chart_keeps_each_views_best_series():
    from plots import timing

    point = lambda size, seconds: {"size": size, "seconds": seconds}  # noqa: E731
    curves = {
        ("gpu_kernel", "fp32"): [point(1, 1.0), point(4, 4.0)],
        ("gpu_kernel", "fp16"): [
            point(1, 2.0),
            point(4, 1.0),
        ],  # slower at 1, faster at the largest shared
        ("gpu_kernel", "tiled"): [point(4, 0.5)],  # faster, but alone at 4 and no 1: still shared
        ("cpu_all", ""): [point(1, 0.1)],
    }
    shown = timing.best_per_view(curves, lambda p: p["size"], lambda p: p["seconds"])
    assert set(shown) == {("gpu_kernel", "tiled"), ("cpu_all", "")}
    del curves[("gpu_kernel", "tiled")]
    assert set(timing.best_per_view(curves, lambda p: p["size"], lambda p: p["seconds"])) == {
        ("gpu_kernel", "fp16"),
        ("cpu_all", ""),
    }
