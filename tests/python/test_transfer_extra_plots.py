"""Issue 18's charts on the synthetic GPU fixture (make_gpu_fixture.py's transfer_extra_rows): the
"N at which packing wins" crossover matches the models that made the rows, every chart is drawn,
and a file without those rows lists each chart as missing with the reason."""

import sys

import pytest

from conftest import ROOT, load_json
from test_plots import CPU_FIXTURE, GPU_FIXTURE, crossing, fixture_models

pytest.importorskip("matplotlib")
sys.path.insert(
    0, str(ROOT)
)  # the plots package, as `python -m plots` finds it from the repository root
from plots import common, families  # noqa: E402

small_tensors = families.module("transfer_small_tensors_charts")
transfer_extra = families.module("transfer_extra_charts")


def test_packing_crossover_matches_the_model():
    models = fixture_models()
    found = {
        c["versus"]: c["tensors"] for c in small_tensors.packing_crossovers(load_json(GPU_FIXTURE))
    }
    assert set(found) == {"separate_pageable", "separate_pinned", "batch_api"}
    truth = crossing(
        lambda n: (
            models.small_tensor_seconds("separate_pageable", n)
            - models.small_tensor_seconds("packed_pinned", n)
        ),
        1,
        4096,
    )
    assert 4 < truth < 16  # the model's answer lies between two measured counts
    assert 4 < found["separate_pageable"] < 16
    assert found["separate_pageable"] == pytest.approx(
        truth, rel=0.15
    )  # log-interpolated between 4 and 16
    assert found["separate_pinned"] is None  # already pinned: packing only adds a host copy
    assert found["batch_api"] is None


def test_crossover_rule_at_the_edges():
    wins_everywhere = [(1, 1.0, 1.0, 1.0), (2, 1.0, 1.0, 1.0)]
    slower = [(1, 2.0, 2.0, 2.0), (2, 2.0, 2.0, 2.0)]
    assert common.crossover(wins_everywhere, slower) == 1
    assert common.crossover(slower, wins_everywhere) is None
    # Loses at 1, wins at 100: the crossing of log ratio on log N.
    packed, other = [(1, 2.0, 0, 0), (100, 1.0, 0, 0)], [(1, 1.0, 0, 0), (100, 2.0, 0, 0)]
    assert common.crossover(packed, other) == pytest.approx(10.0)
    # Wins at the smallest, loses in between, wins at the largest: the last crossing counts.
    zigzag = [(1, 1.0, 0, 0), (10, 3.0, 0, 0), (100, 1.0, 0, 0)]
    flat = [(1, 2.0, 0, 0), (10, 2.0, 0, 0), (100, 2.0, 0, 0)]
    assert 10 < common.crossover(zigzag, flat) < 100


def _draw(doc, outdir):
    """My two chart families in-process (the full report is tested by test_plots.py's GPU_CHARTS)."""
    drawn, missing = small_tensors.charts(doc, outdir)
    more, more_missing = transfer_extra.charts(doc, outdir)
    return drawn + more, missing + more_missing


def test_every_extra_chart_from_the_gpu_file(tmp_path):
    drawn, missing = _draw(load_json(GPU_FIXTURE), tmp_path)
    assert missing == []
    assert sorted(c["png"] for c in drawn) == sorted(
        f"{stem}.png"
        for stem in (
            "small_tensors_gpu0",
            "device_local_gpu0",
            "sm_copy_gpu0_h2d",
            "sm_copy_gpu0_d2h",
            "managed_gpu0",
            "latency_gpu0",
        )
    )
    for chart in drawn:
        assert (tmp_path / chart["png"]).stat().st_size > 1000
        assert (tmp_path / chart["svg"]).stat().st_size > 1000
    caption = next(c["caption"] for c in drawn if c["png"] == "small_tensors_gpu0.png")
    assert "packing wins from N ≈ 14" in caption
    assert "packing does not win in the measured range" in caption


def test_files_without_the_rows_say_why(tmp_path):
    doc = load_json(GPU_FIXTURE)
    for row in doc["benchmarks"]:
        if row.get("op") in ("small_tensors", "managed"):
            row.update(
                skipped=True, skip_reason="no usable GPU: test", iterations=0, validated=None
            )
    doc["benchmarks"] = [
        r
        for r in doc["benchmarks"]
        if r.get("op") not in ("latency", "sm_copy", "device_local_copy")
    ]
    drawn, missing = _draw(doc, tmp_path)
    assert drawn == []
    assert "many small tensors: no small_tensors rows ran (skipped: no usable GPU: test)" in missing
    assert "managed memory: no managed rows ran (skipped: no usable GPU: test)" in missing
    for what in (
        "latency: no latency rows ran",
        "SM-initiated copies: no sm_copy rows ran",
        "device-local copies: no device_local_copy rows ran",
    ):
        assert what in missing
    drawn, missing = _draw(load_json(CPU_FIXTURE), tmp_path)
    assert drawn == [] and len(missing) == 5


def test_the_small_tensors_chart_answers_when_packing_wins(tmp_path, monkeypatch):
    # It drew four time lines over four decades; now each other way's time over packing's, with 1× marked.
    from plots import common

    kept = {}

    def keep(fig, outdir, stem, title, caption=""):
        ax = fig.axes[0]
        kept[stem] = (
            title,
            ax.get_yscale(),
            [(line.get_label(), list(line.get_ydata())) for line in ax.get_lines()],
        )
        return {"png": f"{stem}.png", "caption": caption}

    monkeypatch.setattr(common, "save", keep)
    small_tensors.charts(load_json(GPU_FIXTURE), tmp_path)
    title, scale, lines = kept["small_tensors_gpu0"]
    assert "packing" in title and "when does" not in title, title  # the answer, not the question
    ratios = [label for label, _ in lines if label.startswith("vs ")]
    assert len(ratios) == 3 and not any("pack into pinned" in label for label in ratios), ratios
    assert any(label.startswith("1×") and set(y) == {1.0} for label, y in lines)
    assert scale == "log"
