"""`offloadbench export`: a tracker's own format, one entry per benchmark from its valid repetitions,
skipped and failed rows left out, units stated and the better direction named."""

import json
import statistics

import pytest

from conftest import ROOT

GOOD = ROOT / "tests" / "data" / "quick_cpu_reps10.json"
SCALE_TO_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


@pytest.fixture
def results_with_skips(tmp_path):
    doc = json.loads(GOOD.read_text())
    doc["benchmarks"].append(
        {
            "name": "transfer/h2d/pinned/4KiB/manual_time",
            "run_name": "x",
            "run_type": "iteration",
            "repetitions": 10,
            "repetition_index": 0,
            "threads": 1,
            "iterations": 0,
            "real_time": 0,
            "cpu_time": 0,
            "time_unit": "ns",
            "family": "transfer",
            "skipped": True,
            "skip_reason": "no GPU",
            "error_occurred": True,
            "error_message": "no GPU",
            "validated": None,
        }
    )
    failed = next(r for r in doc["benchmarks"] if r["run_type"] == "iteration")
    failed.update(validated=False, invalid_reason="test")
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))
    return path, doc


def expected_medians(doc):
    samples = {}
    for r in doc["benchmarks"]:
        if (
            r["run_type"] == "iteration"
            and not r.get("skipped")
            and r.get("validated") is not False
        ):
            samples.setdefault(r["name"], []).append(r["real_time"] * SCALE_TO_NS[r["time_unit"]])
    return {name: statistics.median(v) for name, v in samples.items()}


def test_github_action_benchmark_format(run_offloadbench, results_with_skips):
    path, doc = results_with_skips
    result = run_offloadbench("export", "--format", "github-action-benchmark", path)
    assert result.returncode == 0, result.stderr
    entries = json.loads(result.stdout)
    expected = expected_medians(doc)
    assert {e["name"] for e in entries} == set(expected), "skipped rows are not exported"
    for e in entries:
        assert e["unit"] == "ns"
        assert e["value"] == pytest.approx(expected[e["name"]], rel=1e-9)
    assert "customSmallerIsBetter" in result.stderr


def test_bencher_format_and_a_rate_metric(run_offloadbench, results_with_skips, tmp_path):
    path, doc = results_with_skips
    out = tmp_path / "bmf.json"
    result = run_offloadbench(
        "export", "--format", "bencher", "--metric", "bytes_per_second", path, "--out", out
    )
    assert result.returncode == 0, result.stderr
    bmf = json.loads(out.read_text())
    assert bmf and all(set(m) == {"throughput"} for m in bmf.values())
    for metrics in bmf.values():
        t = metrics["throughput"]
        assert t["lower_value"] <= t["value"] <= t["upper_value"]
    assert "higher is better" in result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["--format", "xml"],
        ["--format", "bencher", "--metric", "name"],
        ["--format", "bencher", "--out", "/no/dir/x.json"],
    ],
)
def test_bad_export_options_are_bad_input(run_offloadbench, results_with_skips, args):
    path, _ = results_with_skips
    result = run_offloadbench("export", *args, path)
    assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, result.stderr
