"""The copy idioms' analysis, summary lines and charts on the synthetic GPU fixture (make_gpu_fixture.py's
transfer_idiom_rows): the fastest idiom and its margin match the models that made the rows, every
break-even is the smallest count that pays, the charts are drawn, and a file without the rows lists
them as missing with the reason."""

import shutil
import sys

import pytest

from conftest import ROOT, load_json
from test_plots import GPU_FIXTURE, find, fixture_models

pytest.importorskip("matplotlib")
sys.path.insert(
    0, str(ROOT)
)  # the plots package, as `python -m plots` finds it from the repository root
from plots import families  # noqa: E402

transfer_idioms = families.module("transfer_idioms_charts")


@pytest.fixture
def analysed(tmp_path, run_offloadbench):
    path = tmp_path / "gpu.json"
    shutil.copy(GPU_FIXTURE, path)
    result = run_offloadbench("analyze", path)
    assert result.returncode == 0, result.stderr
    return path


def test_fastest_idiom_and_margin_match_the_models(analysed):
    models = fixture_models()
    groups = load_json(analysed)["analysis"]["torch_idioms"]
    batch = find(groups, direction="h2d")
    per_batch = {
        m: models.idiom_batch_seconds(m)
        for m in (
            "to_from_pageable",
            "pin_memory_fresh",
            "pin_memory_cached",
            "pin_memory_cached_item",
            "pin_thread_pipeline",
            "already_pinned",
        )
    }
    ranked = sorted(per_batch, key=per_batch.get)
    assert [i["method"] for i in batch["idioms"]] == ranked
    assert batch["fastest"] == ranked[0] == "already_pinned"
    assert batch["runner_up"] == ranked[1] == "pin_thread_pipeline"
    assert batch["margin"] == pytest.approx(per_batch[ranked[1]] / per_batch[ranked[0]], rel=1e-9)
    assert batch["margin_low"] < batch["margin"] < batch["margin_high"]  # ±2 % jitter on each
    assert batch["speedup_over_pageable"] == pytest.approx(
        per_batch["to_from_pageable"] / per_batch[ranked[0]], rel=1e-9
    )
    assert batch["idioms"][0]["seconds"] == pytest.approx(
        per_batch[ranked[0]], rel=1e-9
    )  # per batch, not per call
    results = find(groups, direction="d2h", bytes=256000)
    assert results["fastest"] == "result_to_pinned"


def test_pinning_at_scale_break_even_and_host_half(analysed):
    models = fixture_models()
    analysis = load_json(analysed)["analysis"]
    entries = analysis["pinning_at_scale"]
    assert len(entries) == 3 * len(models.PIN_SCALE_RATE)
    for e in entries:
        saved = e["pageable_copy_seconds"] - e["pinned_copy_seconds"]
        n = e["break_even_copies"]
        assert n * saved > e["pin_seconds"] >= (n - 1) * saved
        assert e["pin_seconds"] == pytest.approx(
            e["bytes"] / models.PIN_SCALE_RATE[(e["method"], e["huge_pages"])]
        )
    touch = find(analysis["first_touch_at_scale"], huge_pages="madvise", bytes=2**30)
    assert touch["ms_per_gib"] == pytest.approx(
        1e3 * 2**30 / models.FIRST_TOUCH_RATE["madvise"], rel=0.03
    )
    assert touch["huge_page_fraction"] == 1.0


def test_summary_has_one_line_per_finding(analysed, run_offloadbench):
    result = run_offloadbench("summary", analysed, "--all")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert (
        "torch idioms, batch of 64 (36.8 MiB), 2.00 ms GPU step: a batch already pinned fastest"
        in out
    )
    assert "ahead of a DataLoader pin thread" in out
    assert "result D2H of 250 KiB: into pinned memory fastest" in out
    assert "loss.item(): 15.0 µs per call" in out
    for size in ("1 GiB", "2 GiB", "4 GiB"):
        lines = [l for l in out.splitlines() if f"pinning {size} on GPU 0 pays after:" in l]
        assert len(lines) == 1, out
        assert "cudaHostAlloc" in lines[0] and "register+THP" in lines[0]
        assert len([l for l in out.splitlines() if f"first touch of {size}:" in l]) == 1
    assert "4.00× with huge pages" in out


def test_both_charts_from_the_gpu_file(analysed, tmp_path):
    drawn, missing = transfer_idioms.charts(load_json(analysed), tmp_path)
    assert missing == []
    # Pinning at scale: one chart per page size, so the two are never drawn alike.
    assert sorted(c["png"] for c in drawn) == [
        "pinning_at_scale.png",
        "pinning_at_scale_thp.png",
        "torch_idioms_gpu0.png",
    ]
    for chart in drawn:
        assert (tmp_path / chart["png"]).stat().st_size > 1000
        assert (tmp_path / chart["svg"]).stat().st_size > 1000
    caption = next(c["caption"] for c in drawn if c["png"] == "torch_idioms_gpu0.png")
    assert "Fastest at this batch: already pinned + non_blocking, " in caption
    assert "System THP mode: madvise" in next(
        c["caption"] for c in drawn if c["png"] == "pinning_at_scale.png"
    )


def test_without_gpu_rows_the_host_half_is_still_drawn(analysed, tmp_path):
    doc = load_json(analysed)
    doc["analysis"]["torch_idioms"] = []
    doc["analysis"]["pinning_at_scale"] = []
    for row in doc["benchmarks"]:
        if row.get("op") in ("torch_idiom", "pin_at_scale"):
            row.update(
                skipped=True, skip_reason="no usable GPU: test", iterations=0, validated=None
            )
    drawn, missing = transfer_idioms.charts(doc, tmp_path)
    assert [c["png"] for c in drawn] == ["pinning_at_scale.png", "pinning_at_scale_thp.png"]
    assert missing == [
        "PyTorch copy idioms: no torch_idiom rows ran (skipped: no usable GPU: test)"
    ]
    doc["analysis"]["first_touch_at_scale"] = []
    drawn, missing = transfer_idioms.charts(doc, tmp_path)
    assert drawn == [] and len(missing) == 2
    doc.pop("analysis")
    assert transfer_idioms.charts(doc, tmp_path)[1][0].endswith(
        "needs the analysis block (run offloadbench analyze)"
    )
