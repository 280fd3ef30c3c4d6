"""The mlp suite through the CLI: a CPU-only quick run writes rows with the pairing fields, training
rows lower the loss, and GPU rows in this build say why they were skipped."""

from conftest import load_json


def test_mlp_cpu_rows_carry_pairing_fields_and_final_loss(run_offloadbench, tmp_path):
    out = tmp_path / "mlp.json"
    proc = run_offloadbench(
        "run",
        "--suite",
        "mlp",
        "--quick",
        "--device",
        "cpu",
        "--repetitions",
        "1",
        "--out",
        out,
        "--",
        "--benchmark_filter=/b64/cpu_1t",
        "--benchmark_min_time=0.01",
    )
    assert proc.returncode == 0, proc.stderr
    rows = [r for r in load_json(out)["benchmarks"] if r["run_type"] == "iteration"]
    assert {r["step_variant"] for r in rows} == {
        "inference",
        "train_sgd",
        "train_adamw",
        "train_adamw_clip",
        "train_sgd_accum4",
    }
    for row in rows:
        assert row["validated"] is True, row["name"]
        assert row["view"] == "cpu_1t" and row["series"] == "" and row["sweep"] == "batch"
        assert row["compare_group"] == f"mlp/784-128-10/{row['step_variant']}"
        assert row["device"] == "cpu" and row["cpu_threads"] == 1
        assert row["samples_per_second"] > 0 and row["flop_per_second"] > 0
        if row["variant"] == "train":
            assert row["final_loss"] < row["initial_loss"], row["name"]


def test_mlp_gpu_rows_validate_or_skip_with_a_reason(run_offloadbench, tmp_path):
    out = tmp_path / "mlp_gpu.json"
    proc = run_offloadbench(
        "run",
        "--suite",
        "mlp",
        "--quick",
        "--repetitions",
        "1",
        "--out",
        out,
        "--",
        "--benchmark_filter=train_sgd/b64/gpu/fp32/graph",
        "--benchmark_min_time=0.01",
    )
    assert proc.returncode == 0, proc.stderr
    rows = [r for r in load_json(out)["benchmarks"] if r["run_type"] == "iteration"]
    assert {r["data_path"] for r in rows} == {"resident", "pageable", "pinned_overlap"}
    for row in rows:
        assert row["series"] == "fp32 graph" and row["launch_mode"] == "graph"
        if row["skipped"]:
            assert row["skip_reason"], row["name"]
        else:
            assert row["validated"] is True and row["final_loss"] < row["initial_loss"], row["name"]
