"""The batches family's analysis, summary lines and chart on the synthetic fixture
(fixtures/make_batches_fixture.py; no GPU ran it): the batch from which a uint8 copy + GPU normalize
beats a CPU normalize + fp32 copy matches the model that made the rows, `summary` prints one line per
crossover, the chart marks it, and files without the family's rows neither crash nor list it."""

import math
import shutil
import sys

import pytest

from conftest import ROOT, load_json

FIXTURES = ROOT / "tests" / "python" / "fixtures"
BATCHES_FIXTURE = FIXTURES / "batches_synthetic.json"
sys.path.insert(0, str(FIXTURES))
import make_batches_fixture as model  # noqa: E402


def model_crossing(image, memory):
    """The model's crossing of log(t_a / t_b) = 0 interpolated on log batch, as the analysis does."""
    elements = image[0] * image[1] * image[2]
    ratio = [
        (
            b,
            model.batch_seconds("cpu_normalize_fp32", memory, b * elements)
            / model.batch_seconds("gpu_normalize_fp32", memory, b * elements),
        )
        for b in model.BATCHES
    ]
    last_losing = max(i for i, (_, r) in enumerate(ratio) if r < 1)
    (b0, r0), (b1, r1) = ratio[last_losing], ratio[last_losing + 1]
    t = -math.log(r0) / (math.log(r1) - math.log(r0))
    return math.exp(math.log(b0) + t * (math.log(b1) - math.log(b0))), b1


@pytest.fixture
def analysed(tmp_path, run_offloadbench):
    path = tmp_path / "batches.json"
    shutil.copy(BATCHES_FIXTURE, path)
    result = run_offloadbench("analyze", path)
    assert result.returncode == 0, result.stderr
    return path


def entry(analysis, **fields):
    found = [e for e in analysis["batches"] if all(e.get(k) == v for k, v in fields.items())]
    assert len(found) == 1, (fields, len(found))
    return found[0]


def test_fixture_is_current_and_says_it_is_synthetic(tmp_path):
    model.main(["make_batches_fixture.py", str(tmp_path / "again.json")])
    assert load_json(tmp_path / "again.json") == load_json(BATCHES_FIXTURE)
    assert "no GPU ran this" in load_json(BATCHES_FIXTURE)["context"]["synthetic"]


def test_crossovers_match_the_model(analysed):
    analysis = load_json(analysed)["analysis"]
    # 3 images × 2 memory kinds × 3 GPU placements, each against (a).
    assert len(analysis["batches"]) == 18
    for image, first in (((224, 224, 3), 4), ((64, 64, 3), 32)):
        for memory in ("pinned", "pageable"):
            e = entry(
                analysis,
                image=model.label(image),
                host_memory=memory,
                placement="gpu_normalize_fp32",
            )
            crossing, first_winning = model_crossing(image, memory)
            assert e["kind"] == "crossover"
            assert e["first_winning_batch"] == first_winning
            assert e["batch"] == pytest.approx(crossing, rel=0.02)
            assert e["low"] <= e["batch"] <= e["high"]
            if memory == "pinned":
                assert first_winning == first
    big = entry(analysis, image="1024x1280x1", host_memory="pinned", placement="gpu_normalize_fp32")
    assert big["kind"] == "gpu_wins_all"
    elements = 1024 * 1280 * 256
    expected = model.batch_seconds("cpu_normalize_fp32", "pinned", elements) / model.batch_seconds(
        "gpu_normalize_fp32", "pinned", elements
    )
    assert big["speedup_at_largest"] == pytest.approx(expected, rel=1e-6)
    assert big["speedup_low_at_largest"] < expected < big["speedup_high_at_largest"]


def test_summary_names_each_crossover_in_one_line(run_offloadbench):
    result = run_offloadbench("summary", BATCHES_FIXTURE, "--all")
    assert result.returncode == 0, result.stderr
    lines = [line.strip() for line in result.stdout.splitlines() if " batches from " in line]
    assert len(lines) == 6, result.stdout  # 3 images × pinned, pageable; fp32 GPU normalize only
    assert any(
        line.startswith(
            "224x224x3 batches from pinned memory: send uint8 and normalize on the GPU from "
            "batch 4 "
        )
        for line in lines
    ), lines
    assert any(
        line.startswith(
            "64x64x3 batches from pinned memory: send uint8 and normalize on the GPU from batch 32 "
        )
        for line in lines
    ), lines
    assert any(
        line.startswith(
            "1024x1280x1 batches from pinned memory: send uint8 and normalize on the GPU at "
            "every batch measured (1–256)"
        )
        for line in lines
    ), lines


pytest.importorskip("matplotlib")
sys.path.insert(
    0, str(ROOT)
)  # the plots package, as `python -m plots` finds it from the repository root
from plots import families  # noqa: E402

batches = families.module("batches_charts")


def test_one_chart_per_image_with_the_crossover_marked(analysed, tmp_path):
    drawn, missing = batches.charts(load_json(analysed), tmp_path)
    assert missing == []
    assert sorted(c["png"] for c in drawn) == sorted(
        f"batches_gpu0_{stem}.png" for stem in ("64x64x3", "224x224x3", "1024x1280x1")
    )
    for chart in drawn:
        assert (tmp_path / chart["png"]).stat().st_size > 1000
        assert (tmp_path / chart["svg"]).stat().st_size > 1000
    caption = next(c["caption"] for c in drawn if c["png"] == "batches_gpu0_224x224x3.png")
    assert "pinned: GPU normalize (fp32) wins from batch 4" in caption


def test_without_an_analysis_block_the_chart_finds_the_same_crossing(tmp_path):
    found = {
        (c["image"], c["host_memory"]): c["batch"]
        for c in batches.crossovers(load_json(BATCHES_FIXTURE))
    }
    crossing, _ = model_crossing((224, 224, 3), "pinned")
    assert found[("224x224x3", "pinned")] == pytest.approx(crossing, rel=0.02)
    assert found[("1024x1280x1", "pinned")] == 1  # wins at the smallest batch
    drawn, _ = batches.charts(load_json(BATCHES_FIXTURE), tmp_path)
    assert len(drawn) == 3


def test_files_without_the_family_or_with_it_skipped(tmp_path):
    gpu = load_json(
        FIXTURES / "gpu_synthetic.json"
    )  # another suite's file: nothing drawn, nothing missing
    assert batches.charts(gpu, tmp_path) == ([], [])
    doc = load_json(BATCHES_FIXTURE)
    for row in doc["benchmarks"]:
        if row.get("op") == "batch_to_gpu":
            row.update(skipped=True, skip_reason="no CUDA-capable GPU")
    drawn, missing = batches.charts(doc, tmp_path)
    assert drawn == []
    assert missing == [
        "what to send over the bus: no batch_to_gpu rows ran (skipped: no CUDA-capable GPU)"
    ]
