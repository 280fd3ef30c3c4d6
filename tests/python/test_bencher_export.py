"""`export --format bencher` against Bencher's published Bencher Metric Format (BMF), field by field:
{benchmark name: {measure slug: {value, lower_value?, upper_value?}}} with every measure a row carries
(latency ns, throughput, bandwidth GB/s, flops), and the testbed name `--print-testbed` gives."""

import json
import re
import statistics

import jsonschema
import pytest

from conftest import ROOT

H100 = ROOT / "results" / "reference" / "nvidia-h100-80gb-hbm3-2026-11-26-quick.json"
CPU = ROOT / "tests" / "data" / "quick_cpu_reps10.json"
CPU_ONLY = ROOT / "tests" / "python" / "fixtures" / "cpu_only.json"

# Bencher's BMF JSON Schema as published (https://bencher.dev/docs/reference/bencher-metric-format, $id
# https://bencher.dev/bmf.json): an object of benchmarks, each an object of measures, each a metric.
BMF_SCHEMA = {
    "$id": "https://bencher.dev/bmf.json",
    "$schema": "http://json-schema.org/draft-07/schema",
    "type": "object",
    "patternProperties": {
        ".+": {
            "type": "object",
            "patternProperties": {
                ".+": {
                    "type": "object",
                    "properties": {
                        "value": {"type": "number"},
                        "lower_value": {"type": "number"},
                        "upper_value": {"type": "number"},
                    },
                    "required": ["value"],
                }
            },
        }
    },
}
SLUG_MAX, NAME_MAX = 64, 1024  # Bencher's limits for a measure slug and a benchmark name
SCALE_TO_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
MEASURES = {
    "latency": lambda r: r["real_time"] * SCALE_TO_NS[r.get("time_unit", "ns")],
    "throughput": lambda r: r.get("samples_per_second", r.get("items_per_second")),
    "bandwidth": lambda r: r["bytes_per_second"] / 1e9 if "bytes_per_second" in r else None,
    "flops": lambda r: r.get("flop_per_second"),
}


def expected(doc):
    """Per benchmark and measure, the values of its valid repetitions, from the rows themselves."""
    out = {}
    for r in doc["benchmarks"]:
        if (
            r["run_type"] != "iteration"
            or r.get("skipped")
            or r.get("error_occurred")
            or r.get("validated") is False
        ):
            continue
        for slug, value_of in MEASURES.items():
            value = value_of(r)
            if isinstance(value, (int, float)) and value > 0:
                out.setdefault(r["name"], {}).setdefault(slug, []).append(value)
    return out


@pytest.mark.parametrize("source", [H100, CPU], ids=["h100", "cpu"])
def test_every_measure_of_every_benchmark_in_bencher_metric_format(
    run_offloadbench, source, tmp_path
):
    out = tmp_path / "bmf.json"
    result = run_offloadbench("export", "--format", "bencher", source, "--out", out)
    assert result.returncode == 0, result.stderr
    bmf = json.loads(out.read_text())
    jsonschema.validate(bmf, BMF_SCHEMA)
    want = expected(json.loads(source.read_text()))
    assert set(bmf) == set(want), "one entry per benchmark with a valid repetition, no other"
    for name, measures in bmf.items():
        assert 0 < len(name) <= NAME_MAX
        assert set(measures) == set(want[name]), name
        for slug, metric in measures.items():
            assert len(slug) <= SLUG_MAX and re.fullmatch(r"[a-z0-9-]+", slug)
            assert set(metric) == {"value", "lower_value", "upper_value"}
            values = want[name][slug]
            assert metric["value"] == pytest.approx(statistics.median(values), rel=1e-9)
            assert metric["lower_value"] == pytest.approx(min(values), rel=1e-9)
            assert metric["upper_value"] == pytest.approx(max(values), rel=1e-9)
            assert metric["lower_value"] <= metric["value"] <= metric["upper_value"]
    assert "bencher run --adapter json --testbed" in result.stderr


def test_the_h100_file_carries_all_four_measures(run_offloadbench):
    result = run_offloadbench("export", "--format", "bencher", H100)
    assert result.returncode == 0, result.stderr
    bmf = json.loads(result.stdout)
    assert {"latency", "throughput", "bandwidth", "flops"} == {
        slug for m in bmf.values() for slug in m
    }
    sgemm = bmf["compute/sgemm/square/cublas_fp32/gpu_kernel/4096/min_time:0.002/manual_time"]
    assert sgemm["flops"]["value"] > 1e13  # FLOP/s, not GFLOP/s
    copy = bmf["transfer/h2d/pinned/256MiB/manual_time"]
    assert 40 < copy["bandwidth"]["value"] < 64  # GB/s, under the Gen5 x16 link's 63 GB/s
    assert copy["latency"]["value"] == pytest.approx(
        256 * 2**20 / (copy["bandwidth"]["value"] * 1e9) * 1e9, rel=0.05
    )


@pytest.mark.parametrize(
    "source, testbed",
    [(H100, "vm-nvidia-h100-80gb-hbm3-580.159.04-pcie5x16"), (CPU_ONLY, "vm-amd-epyc-no-gpu")],
)
def test_testbed_names_host_gpu_driver_and_link(run_offloadbench, source, testbed):
    result = run_offloadbench("export", "--format", "bencher", "--print-testbed", source)
    assert result.returncode == 0, result.stderr
    assert result.stdout == testbed + "\n"
    assert len(testbed) <= SLUG_MAX


def test_one_metric_still_exports_alone(run_offloadbench):
    result = run_offloadbench("export", "--format", "bencher", "--metric", "real_time", CPU)
    assert result.returncode == 0, result.stderr
    assert all(set(m) == {"latency"} for m in json.loads(result.stdout).values())
