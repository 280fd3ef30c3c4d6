"""The streams suite through the CLI: a quick run writes a file whose rows carry the suite's fields;
without a GPU every row is skipped with the reason, with one every row is validated."""

from conftest import load_json

KERNEL_OPS = {
    "serial",
    "async",
    "pipelined",
    "pageable_pipelined",
    "pipelined_best",
    "host_overlap",
}


def test_quick_run_rows_carry_the_fields(run_offloadbench, tmp_path):
    out = tmp_path / "streams.json"
    result = run_offloadbench(
        "run",
        "--suite",
        "streams",
        "--quick",
        "--sizes",
        "16MiB",
        "--repetitions",
        "1",
        "--out",
        out,
        "--",
        "--benchmark_min_time=0.001",
    )
    assert result.returncode == 0, result.stderr
    doc = load_json(out)
    reason = doc["context"]["cuda"].get("unavailable_reason", "")
    rows = [r for r in doc["benchmarks"] if r["run_type"] == "iteration"]
    assert len(rows) == 19  # one size: see the case table in benchmarks/streams/streams_cases.cpp
    ops = {r["op"] for r in rows}
    assert ops == KERNEL_OPS | {"bidirectional"}
    for row in rows:
        assert row["family"] == "streams"
        assert row["bytes"] == 16 << 20 and row["device"] == 0
        assert row["bound"] in {"no_overlap", "one_copy_engine", "two_copy_engines", "unknown"}
        if row["op"] in KERNEL_OPS:
            assert row["workload_ratio"] in (0.25, 1.0, 4.0)
        if row["op"] in {"pipelined", "pageable_pipelined"}:
            assert 1 <= row["streams"] <= row["chunks"]
            assert row["issue_order"] in {"depth_first", "breadth_first"}
        if reason:
            assert row["skipped"] is True and row["skip_reason"] == reason
        else:
            assert row["validated"] is True, row["name"]
            if row["op"] in KERNEL_OPS - {"host_overlap"}:
                for field in (
                    "speedup_over_serial",
                    "bound_time_s",
                    "overlap_efficiency",
                    "host_time_s",
                ):
                    assert row[field] > 0, (row["name"], field)
    headlines = {r.get("headline") for r in rows}
    assert "streams best pipelined, balanced" in headlines


def test_cpu_only_registers_no_streams_cases(run_offloadbench, tmp_path):
    # streams has no CPU case: asking for it on the CPU alone selects nothing, which is bad input.
    out = tmp_path / "cpu.json"
    result = run_offloadbench(
        "run", "--suite", "streams", "--quick", "--device", "cpu", "--out", out
    )
    assert result.returncode == 2, result.stderr
    assert "no benchmark selected" in result.stderr
    assert not out.exists()
