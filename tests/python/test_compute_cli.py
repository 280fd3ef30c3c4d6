"""The compute suite through the CLI: a small CPU run writes rows with the pairing fields the
analysis needs, and GPU rows without a usable GPU are skipped with the reason."""

import re

import pytest
from conftest import load_json

SMALL_CPU = (
    "--benchmark_filter=compute/(triad|dot)/fp32/cpu_|compute/sgemm/square/openblas/cpu_1t/64/"
)


def test_compute_is_listed(run_offloadbench):
    result = run_offloadbench("list")
    assert result.returncode == 0, result.stderr
    assert "compute" in result.stdout


def test_small_cpu_run_writes_paired_validated_rows(run_offloadbench, tmp_path):
    out = tmp_path / "compute.json"
    result = run_offloadbench(
        "run",
        "--suite",
        "compute",
        "--device",
        "cpu",
        "--sizes",
        "1Ki,7,1024",
        "--repetitions",
        "2",
        "--out",
        out,
        "--",
        SMALL_CPU,
        "--benchmark_min_time=0.001",
    )
    assert result.returncode == 0, result.stderr
    # The run ends with the verdicts on its headline figures: here the CPU's (triad, dot, sgemm).
    assert re.search(
        r"^CPU .*: \d+ healthy, \d+ below expectation, 0 impossible$", result.stdout, re.M
    ), result.stdout
    rows = [r for r in load_json(out)["benchmarks"] if r["run_type"] == "iteration"]
    assert rows
    for row in rows:
        assert row["family"] == "compute"
        assert row["validated"] is True, row["name"]
        assert row["device"] == "cpu"
        assert row["view"] in ("cpu_1t", "cpu_all")
        assert row["compare_group"].startswith("compute/")
        assert row["sweep"] in ("elements", "n")
        assert row["cpu_threads"] >= 1
    triad = [r for r in rows if r["op"] == "triad"]
    assert {r["elements"] for r in triad} == {1024, 7}  # 1Ki and 1024 are one size
    assert all(r["bytes"] == 3 * 4 * r["elements"] for r in triad)
    sgemm = [r for r in rows if r["op"] == "sgemm"]
    assert sgemm and all(r["flops"] == 2 * 64**3 and r["flop_per_second"] > 0 for r in sgemm)


def test_gpu_rows_say_why_they_did_not_run(run_offloadbench, tmp_path):
    info = run_offloadbench("info")
    if "no usable gpu" not in info.stdout.lower():
        pytest.skip("a GPU is here: tests/test_gpu_compute.cpp covers the GPU rows")
    out = tmp_path / "gpu.json"
    result = run_offloadbench(
        "run",
        "--suite",
        "compute",
        "--device",
        "0",
        "--sizes",
        "1Ki",
        "--repetitions",
        "1",
        "--out",
        out,
        "--",
        "--benchmark_filter=compute/triad/fp32/gpu_",
    )
    assert result.returncode == 0, result.stderr
    rows = [r for r in load_json(out)["benchmarks"] if r["run_type"] == "iteration"]
    assert {r["view"] for r in rows} == {"gpu_kernel", "gpu_pinned", "gpu_pageable"}
    for row in rows:
        assert row["skipped"] is True
        assert row["skip_reason"]
