"""lab/tools/gpu-check on a machine without a GPU: the plan fits every stage in its budget (and says
when one does not), a dry run and a no-GPU run end with a "no GPU" summary in a small flat folder,
the GPU tests' labels split them into correctness and timing, a stage stops at its limit, the
suite stage packs its results and charts, and bad input is one line with exit code 2."""

import importlib.machinery
import importlib.util
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tarfile
import threading
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "lab" / "tools" / "gpu-check"
NO_GPU = {"GPU_CHECK_ASSUME_GPU": "0"}


def load_gpu_check():
    sys.path.insert(0, str(SCRIPT.parent))
    loader = importlib.machinery.SourceFileLoader("gpu_check", str(SCRIPT))
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader("gpu_check", loader))
    loader.exec_module(module)
    return module


def gpu_check(*args, env=None, timeout=600):
    return subprocess.run(
        [sys.executable, str(SCRIPT), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=dict(os.environ, **(env or {})),
    )


def assert_travels(out):
    """What the GPU machine sends back: at most 8 plain files of at most 16 MiB, no folder."""
    entries = list(out.iterdir())
    assert len(entries) <= 8, entries
    for entry in entries:
        assert entry.is_file(), entry
        assert entry.stat().st_size <= 16 << 20, entry


@pytest.fixture(scope="module")
def build_dir(offloadbench_bin):
    return pathlib.Path(offloadbench_bin).parent


@pytest.fixture(scope="module")
def gpu_tests(build_dir):
    sys.path.insert(0, str(SCRIPT.parent))
    import gpu_check_plan

    tests = gpu_check_plan.gpu_tests(build_dir)
    if not tests:
        pytest.skip(f"{build_dir} was built without CUDA: no GPU tests")
    return tests


def test_plan_fits_every_stage_in_its_budget(build_dir, offloadbench_bin):
    text = gpu_check("--plan", "--build-dir", build_dir)
    assert text.returncode == 0, text.stdout + text.stderr
    for stage in ("build", "test", "suite", "sanitize"):
        assert f"\n{stage} " in text.stdout
    stages = json.loads(gpu_check("--plan", "--json", "--build-dir", build_dir).stdout)
    for name, stage in stages.items():
        assert 0 < stage["estimate_s"] <= stage["limit_s"], name
    # Counted from the program, not written down: the quick suite as `list` gives it.
    listed = json.loads(
        subprocess.run(
            [offloadbench_bin, "list", "--json"], capture_output=True, text=True, check=True
        ).stdout
    )
    assert stages["suite"]["count"] == len(listed)
    units = json.loads((build_dir / "compile_commands.json").read_text())
    assert stages["build"]["count"] == len(units)


def test_plan_fails_when_a_stage_exceeds_its_budget(build_dir, monkeypatch, capsys):
    gpu_check_module = load_gpu_check()
    monkeypatch.setattr(gpu_check_module.plan, "STAGE_LIMIT_S", 1)
    assert gpu_check_module.main(["--plan", "--build-dir", str(build_dir)]) == 1
    assert "OVER BUDGET" in capsys.readouterr().out


def test_gpu_tests_are_correctness_or_timing_with_a_timeout(gpu_tests, build_dir):
    for test in gpu_tests:
        assert test["kind"] in ("correctness", "timing"), test
        assert test["timeout"] > 0 and test["cost"] > 0, test
    correctness = [t for t in gpu_tests if t["kind"] == "correctness"]
    assert 0 < len(correctness) < len(gpu_tests)
    # Every test of the GPU binary is one of them (`-L gpu` selects them all).
    listed = subprocess.run(
        [str(build_dir / "tests" / "gpu_tests"), "--gtest_list_tests"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert len(gpu_tests) == sum(line.startswith("  ") for line in listed.splitlines())
    # A renamed test would silently turn into a timing test: every listed name must exist.
    cmake = (ROOT / "tests" / "CMakeLists.txt").read_text()
    listed_as_correctness = (
        re.search(r"set\(OFFLOADBENCH_GPU_CORRECTNESS_TESTS([^)]*)\)", cmake).group(1).split()
    )
    assert sorted(listed_as_correctness) == sorted(t["name"] for t in correctness)


def test_dry_run_of_every_stage_ends_with_a_no_gpu_summary(tmp_path):
    out = tmp_path / "out"
    result = gpu_check("--stage", "all", "--dry-run", "--out", out, env=NO_GPU)
    assert result.returncode == 0, result.stderr
    summary = (out / "summary.md").read_text()
    assert summary.startswith("# gpu-check: DRY RUN, NO GPU")
    assert "**No GPU**" in summary
    for stage in ("build", "test", "suite", "sanitize", "regression"):
        assert f"| {stage} |" in summary
    assert "--preset device" in (out / "build.log").read_text()
    assert "-L '^gpu_correctness$'" in (out / "test.log").read_text()
    assert (
        "run --quick --suite mlp,transfer," in (out / "suite.log").read_text()
    )  # stopped early, mlp is kept
    sanitize_log = (out / "sanitize.log").read_text()
    for tool in ("memcheck", "racecheck", "synccheck", "initcheck"):
        assert f"--tool {tool}" in sanitize_log
    regression_log = (out / "regression.log").read_text()
    assert (
        "regression-selftest --gpu --offloadbench" in regression_log
        and "--levels 5,10" in regression_log
    )
    assert_travels(out)


def test_without_a_gpu_the_gpu_stages_say_so_and_succeed(tmp_path):
    out = tmp_path / "out"
    result = gpu_check("--stage", "test,suite,sanitize", "--out", out, env=NO_GPU, timeout=60)
    assert result.returncode == 0, result.stderr
    summary = (out / "summary.md").read_text()
    assert summary.startswith("# gpu-check: NO GPU")
    assert summary.count("| no GPU |") == 3
    assert (
        "build"
        not in [
            line.split("|")[1].strip() for line in summary.splitlines() if line.startswith("| ")
        ][1:]
    )
    assert_travels(out)


def test_where_a_gpu_is_required_no_gpu_is_a_failure(tmp_path):
    out = tmp_path / "out"
    result = gpu_check("--stage", "test", "--require-gpu", "--out", out, env=NO_GPU, timeout=60)
    assert result.returncode == 1
    assert "--require-gpu, but no GPU: assumed absent" in result.stderr
    assert (out / "summary.md").read_text().startswith("# gpu-check: NO GPU")


def test_a_visible_gpu_whose_tests_skip_fails_the_test_stage(tmp_path, build_dir, gpu_tests):
    # Here the tests skip (no driver); with a GPU visible that is a failure, never a pass.
    out = tmp_path / "out"
    result = gpu_check(
        "--stage", "test", "--out", out, "--build-dir", build_dir, env={"GPU_CHECK_ASSUME_GPU": "1"}
    )
    assert result.returncode == 1, result.stdout + result.stderr
    summary = (out / "summary.md").read_text()
    assert summary.startswith("# gpu-check: FAILED (test)")
    assert summary.count("Skipped although a GPU is visible") == len(gpu_tests)


def test_suite_stage_brings_back_results_and_one_chart_archive(tmp_path, build_dir):
    out = tmp_path / "out"
    result = gpu_check(
        "--stage",
        "suite",
        "--out",
        out,
        "--build-dir",
        build_dir,
        env={
            "GPU_CHECK_ASSUME_GPU": "1",
            "GPU_CHECK_RUN_ARGS": "--suite transfer --sizes 4KiB -- --benchmark_min_time=0.001",
        },
    )
    summary = (out / "summary.md").read_text()
    assert result.returncode == 0, summary
    results = [p for p in out.glob("*.json") if not p.name.endswith("-pytorch.json")]
    assert len(results) == 1
    # PyTorch eager on the same steps runs in the same stage; without PyTorch and CUDA it says why, failing nothing.
    assert (
        "PyTorch eager on the same mlp steps" in summary or "PyTorch anchor not measured" in summary
    )
    rows = [
        r for r in json.loads(results[0].read_text())["benchmarks"] if r["run_type"] == "iteration"
    ]
    assert f"{len({r['name'] for r in rows})} cases measured" in summary
    archives = list(out.glob("*-plots.tar.gz"))
    assert len(archives) == 1
    with tarfile.open(archives[0]) as tar:
        assert any(name.endswith("report.html") for name in tar.getnames())
    assert_travels(out)


def mlp_row(
    device, launch, real_time, time_unit="us", initial_loss=None, batch=64, skipped=False, **extra
):
    row = {
        "run_type": "iteration",
        "family": "mlp",
        "model": "784-128-10",
        "batch": batch,
        "precision": "fp32",
        "step_variant": "train_sgd",
        "data_path": "resident" if device != "cpu" else "host",
        "device": device,
        "launch_mode": launch,
        "real_time": real_time,
        "time_unit": time_unit,
        "skipped": skipped,
        **extra,
    }
    if initial_loss is not None:
        row["initial_loss"] = initial_loss
    return row


def test_pytorch_anchor_table_puts_ours_beside_pytorch():
    sys.path.insert(0, str(SCRIPT.parent))
    import gpu_anchors

    results = {
        "benchmarks": [
            mlp_row(0, "eager", 100.0),
            mlp_row(0, "eager", 120.0),
            mlp_row(0, "eager", 110.0),
            mlp_row(
                0, "graph", 60_000.0, time_unit="ns", initial_loss=2.3026
            ),  # units are read, not assumed
            mlp_row(0, "graph", 1.0, skipped=True),  # a skipped row is no time
            mlp_row(0, "graph", 5.0, batch=1),  # another batch
            mlp_row("cpu", None, 900.0, initial_loss=2.3025),
        ]
    }
    anchors = {
        "rows": [
            {
                "model": "784-128-10",
                "batch": 64,
                "variant": "train_sgd",
                "median_us": 600.0,
                "impl": "fused",
            },
            {
                "model": "784-128-10",
                "batch": 1024,
                "variant": "train_sgd",
                "median_us": 700.0,
                "impl": "fused",
            },
        ]
    }
    lines = gpu_anchors.mlp_comparison(results, anchors)
    assert lines[2] == (
        "| 784-128-10 | 64 | train_sgd | 110.0 | 60.0 | 600.0 (fused) | 10.00x | yes "
        "| 2.3025 / 2.3026 |"
    )
    assert lines[3] == "| 784-128-10 | 1024 | train_sgd | - | - | 700.0 (fused) | - | - | - / - |"
    slower_graph = {"benchmarks": [mlp_row(0, "eager", 50.0), mlp_row(0, "graph", 60.0)]}
    assert "| **no** |" in gpu_anchors.mlp_comparison(slower_graph, anchors)[2]


def test_pytorch_anchor_without_pytorch_or_gpu_is_exit_2(tmp_path):
    result = subprocess.run(
        [sys.executable, str(SCRIPT.parent / "gpu_anchors.py"), "--out", tmp_path / "a.json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if result.returncode == 0:
        pytest.skip("this machine has PyTorch with a CUDA GPU")
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not (tmp_path / "a.json").exists()


def test_a_step_is_stopped_at_its_limit(tmp_path):
    gpu_check_module = load_gpu_check()
    stage = gpu_check_module.Stage("test", tmp_path, limit_s=1, dry_run=False)
    code, _ = stage.run(["sleep", "30"])
    assert code is None
    assert stage.seconds() < 15
    assert stage.status == "stopped"
    assert "stopped at the time limit" in stage.log.read_text()


def test_a_step_writes_into_its_log_while_it_runs(tmp_path):
    # The GPU machine's tool kills a call at 10 minutes and brings back only what is in --out by then.
    gpu_check_module = load_gpu_check()
    stage = gpu_check_module.Stage("suite", tmp_path, limit_s=60, dry_run=False)
    step = [
        sys.executable,
        "-u",
        "-c",
        "import time; print('first', 'half'); time.sleep(3); print('second', 'half')",
    ]
    runner = threading.Thread(target=stage.run, args=(step,))
    runner.start()
    deadline = time.monotonic() + 2.5
    while "first half" not in stage.log.read_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "first half" in stage.log.read_text() and "second half" not in stage.log.read_text()
    runner.join()
    log = stage.log.read_text()
    assert log.index("first half") < log.index("second half") < log.index("# -> exit 0")


def test_files_too_big_to_travel_are_cut_or_compressed(tmp_path):
    gpu_check_module = load_gpu_check()
    (tmp_path / "suite.log").write_bytes(b"x" * (20 << 20) + b"LAST LINE\n")
    (tmp_path / "run.json").write_text(json.dumps({"rows": ["same row"] * (3 << 20)}))
    notes = gpu_check_module.keep_within_limits(tmp_path)
    assert len(notes) == 2
    log = (tmp_path / "suite.log").read_bytes()
    assert len(log) <= 16 << 20 and log.endswith(b"LAST LINE\n")
    assert not (tmp_path / "run.json").exists() and (tmp_path / "run.json.gz").exists()
    assert_travels(tmp_path)


@pytest.mark.parametrize(
    "args",
    [
        ["--stage", "bogus", "--out", "{out}"],
        ["--stage", "test"],
        ["--stage", "build", "--out", "{out}", "--time-limit", "-1"],
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, args):
    result = gpu_check(*[a.format(out=tmp_path / "new") for a in args], env=NO_GPU)
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1 and result.stderr.startswith("gpu-check: ")
    assert not (tmp_path / "new").exists()


def test_a_folder_with_files_in_it_is_refused_and_kept(tmp_path):
    (tmp_path / "keep.txt").write_text("mine")
    result = gpu_check("--stage", "build", "--out", tmp_path, "--dry-run", env=NO_GPU)
    assert result.returncode == 2
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]


def test_a_carried_build_runs_from_where_it_was_carried_to(tmp_path, build_dir, gpu_tests):
    packed = tmp_path / "devbuild"
    assert gpu_check("--pack-build", packed, "--build-dir", build_dir).returncode == 0
    out = tmp_path / "out"
    gpu_check(
        "--stage", "test", "--out", out, "--build-dir", packed, env={"GPU_CHECK_ASSUME_GPU": "1"}
    )
    summary = (out / "summary.md").read_text()
    assert "sources unchanged: not rebuilt" in summary
    # ctest ran the copies (its absolute paths now point at them) and every GPU test reached its skip.
    log = (out / "test.log").read_text()
    assert (
        str(packed / "tests" / "gpu_tests") in log
        and str(build_dir / "tests" / "gpu_tests") not in log
    )
    assert summary.count("Skipped although a GPU is visible") == len(gpu_tests)


def test_a_carried_build_of_other_sources_is_not_used(tmp_path, build_dir):
    sys.path.insert(0, str(SCRIPT.parent))
    import gpu_check_carry

    packed = tmp_path / "devbuild"
    gpu_check_carry.pack_build(build_dir, packed)
    origin = json.loads((packed / "carried.json").read_text())
    assert gpu_check_carry.use_carried_build(packed) is None
    (packed / "carried.json").write_text(json.dumps(dict(origin, sources_sha256="0" * 64)))
    assert "sources changed" in gpu_check_carry.use_carried_build(packed)


def test_a_carried_build_whose_libraries_are_missing_here_is_not_used(tmp_path, build_dir):
    sys.path.insert(0, str(SCRIPT.parent))
    import gpu_check_carry

    if shutil.which("ldd") is None or shutil.which("cc") is None:
        pytest.skip("needs ldd and a C compiler")
    packed = tmp_path / "devbuild"
    gpu_check_carry.pack_build(build_dir, packed)
    assert gpu_check_carry.missing_libraries([packed / "offloadbench"]) == []
    # An executable linked against a library that is then taken away, as on an image without it.
    (tmp_path / "gone.c").write_text("int gone(void) { return 1; }\n")
    (tmp_path / "main.c").write_text("int gone(void);\nint main(void) { return gone(); }\n")
    subprocess.run(
        ["cc", "-shared", "-fPIC", "-o", tmp_path / "libgone.so", tmp_path / "gone.c"], check=True
    )
    tests = packed / "tests"
    tests.mkdir(exist_ok=True)
    subprocess.run(
        ["cc", "-o", tests / "extra_tests", tmp_path / "main.c", f"-L{tmp_path}", "-lgone"],
        check=True,
    )
    (tmp_path / "libgone.so").unlink()
    assert gpu_check_carry.missing_libraries([tests / "extra_tests"]) == ["libgone.so"]
    assert "cannot find libgone.so" in gpu_check_carry.use_carried_build(packed)


def test_sanitizer_summaries_are_read_for_every_tool():
    findings = load_gpu_check().sanitizer_findings
    assert findings("========= ERROR SUMMARY: 0 errors\n") == (0, 0)
    assert findings("========= ERROR SUMMARY: 3 errors\n") == (3, 0)
    assert findings(
        "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n"
    ) == (0, 0)
    assert findings("========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)\n") == (
        1,
        0,
    )
    assert findings(
        "========= RACECHECK SUMMARY: 2 hazards displayed (0 errors, 2 warnings)\n"
    ) == (0, 2)
    assert findings("[  PASSED  ] 8 tests.\n") is None


def test_first_light_dry_run_lists_info_tests_side_by_side_the_run_and_pytorch(tmp_path):
    out = tmp_path / "out"
    result = gpu_check("--stage", "first-light", "--dry-run", "--out", out, env=NO_GPU)
    assert result.returncode == 0, result.stderr
    log = (out / "first-light.log").read_text()
    sys.path.insert(0, str(SCRIPT.parent))
    import gpu_check_plan

    steps = [line for line in log.splitlines() if line.startswith("$ ")]
    # Most important first: info, the correctness tests side by side, the run (mlp first), PyTorch merged in.
    assert "info --json" in steps[0]
    assert (
        "-L '^gpu_correctness$'" in steps[1]
        and f"-j {gpu_check_plan.FIRST_LIGHT_TEST_JOBS}" in steps[1]
    )
    assert "run --full --suite mlp," in steps[2] and "--benchmark_filter=" in steps[2]
    assert "gpu_anchors.py --first-light --merge" in steps[3]
    # Then the paths no GPU has run yet, apart: their timing tests one at a time, a run into a file of its own.
    assert "-R '^(GpuPeer" in steps[4] and "GpuTransferIdioms" in steps[4] and "-j" not in steps[4]
    assert "run --full --suite transfer,batches,peer" in steps[5] and "first-light-new-" in steps[5]
    assert "pin_at_scale/(host_alloc|register_fresh|register_touched|register_chunks)/" in steps[5]
    # The parts' own limits fit inside the stage's.
    assert sum(gpu_check_plan.FIRST_LIGHT_LIMITS_S.values()) <= gpu_check_plan.FIRST_LIGHT_LIMIT_S
    assert "| first-light |" in (out / "summary.md").read_text()
    assert_travels(out)


def test_first_light_selects_every_gpu_family_and_fits_its_window(build_dir, offloadbench_bin):
    sys.path.insert(0, str(SCRIPT.parent))
    import gpu_check_plan

    cases = gpu_check_plan.first_light_cases(offloadbench_bin)
    if not any(c["fields"].get("device") not in (None, "cpu") for c in cases):
        pytest.skip("built without CUDA: no GPU cases to select")
    names = [c["name"] for c in cases]
    gpu = [c for c in cases if c["fields"].get("device") != "cpu"]

    def some(*parts):
        return any(all(p in n for p in parts) for n in names)

    # The paths the first light must reach once each (lab/gpu-check.md).
    for parts in [
        ("mlp/", "/b1/", "graph"),
        ("mlp/", "/b64/", "eager"),
        ("mlp/", "/b1024/", "bf16"),
        ("transfer/", "pinned", "256MiB"),
        ("transfer/", "pageable", "64KiB"),
        ("bidirectional",),
        ("streams/",),
        ("triad",),
        ("dot",),
        ("sgemm", "4096"),
        ("cublas",),
        ("8192",),
    ]:
        assert some(*parts), parts
    assert {c["fields"]["family"] for c in gpu} >= {"mlp", "transfer", "streams", "compute"}
    plan = gpu_check_plan.first_light_plan(build_dir, offloadbench_bin)
    assert plan["estimate_s"] <= gpu_check_plan.FIRST_LIGHT_BUDGET_S, plan
    # The never-run paths: every pinning method, the idioms, batches and the peer suite, in a run of their own.
    new = [c["name"] for c in gpu_check_plan.first_light_new_cases(offloadbench_bin)]
    for method in ("host_alloc", "register_fresh", "register_touched", "register_chunks"):
        assert any(f"pin_at_scale/{method}/" in n for n in new), method
    assert any("torch_idiom/" in n for n in new) and any(n.startswith("batches/") for n in new)
    assert any(n.startswith("peer/") for n in new) and not set(new) & set(names)


def test_first_light_prices_pinning_from_measured_rates_and_skipped_rows_at_nothing():
    sys.path.insert(0, str(SCRIPT.parent))
    import gpu_check_plan as plan

    gib = 1 << 30
    alloc = plan.case_seconds(
        {"op": "pin_at_scale", "method": "host_alloc", "bytes": gib, "device": 0}, 3, 0.1
    )
    touched = plan.case_seconds(
        {
            "op": "pin_at_scale",
            "method": "register_touched",
            "huge_pages": "none",
            "bytes": gib,
            "device": 0,
        },
        3,
        0.1,
    )
    # Six calls (check, warm-up, pinned copies' memory, three repetitions), each pinning 1 GiB: at the
    # H100's 0.39 s/GiB for cudaHostAlloc and 0.50 + 0.05 s/GiB to touch and register, at least that.
    assert alloc >= 6 * 0.101 * 4 and touched >= 6 * (0.127 + 0.0117) * 4
    assert (
        plan.case_seconds(
            {"op": "pin_at_scale", "method": "register_touched", "bytes": 2 * gib}, 3, 0.1
        )
        > 1.9 * touched
    )
    # A peer pattern below two GPUs is registered as a skipped row: it costs nothing.
    assert (
        plan.case_seconds({"op": "peer", "family": "peer", "device": 0, "gpus": [0]}, 3, 0.1) == 0
    )
    assert (
        plan.case_seconds(
            {"op": "peer", "family": "peer", "device": 0, "gpus": [0, 1], "bytes": 1 << 29}, 3, 0.1
        )
        > 0
    )
    # The first light's runs are `run --full`: priced at its min time, not the quick suite's.
    assert plan.FULL_MIN_TIME_S == 0.1


def test_persistence_mode_is_asked_for_and_a_refusal_is_said(tmp_path, monkeypatch):
    gpu_check_module = load_gpu_check()
    calls = tmp_path / "calls"
    smi = tmp_path / "nvidia-smi"
    smi.write_text(
        f"#!/bin/sh\necho \"$@\" >> {calls}\necho 'Enabled persistence mode for GPU 00000000:1B:00.0.'\n"
    )
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    line = gpu_check_module.enable_persistence()
    assert calls.read_text().split() == ["-pm", "1"]
    assert line.startswith("persistence mode: on") and "Enabled" in line
    smi.write_text(
        "#!/bin/sh\necho 'Unable to set persistence mode: Insufficient Permissions' >&2\nexit 4\n"
    )
    line = gpu_check_module.enable_persistence()
    assert (
        line.startswith("persistence mode: not allowed here") and "Insufficient Permissions" in line
    )


def test_first_light_anchor_rows_follow_our_rows_fields_and_schema():
    sys.path.insert(0, str(SCRIPT.parent))
    import gpu_anchors

    ours = mlp_row(0, "eager", 100.0)
    ours.update(
        run_name="mlp/784-128-10/train_sgd/b64/gpu/fp32/eager/resident/manual_time",
        view="gpu_resident",
        series="fp32 eager",
        compare_group="mlp/784-128-10/train_sgd/b64",
    )
    graph = dict(ours, launch_mode="graph", real_time=20.0)
    results = {"benchmarks": [ours, graph]}
    assert gpu_anchors.matching_row(results, family="mlp", batch=64, launch_mode="eager") is ours
    samples = [(80e-6, 100, 90e-6), (82e-6, 100, 91e-6), (81e-6, 100, 95e-6)]
    entry = gpu_anchors.anchor_entry(
        ours,
        "unused",
        {"launch_mode": "eager"},
        samples,
        {"samples_per_second": 64},
        {"impl": "fused"},
    )
    entry["validated"] = True
    assert entry["name"] == "mlp/784-128-10/train_sgd/b64/gpu/fp32/eager/resident/pytorch"
    assert (
        entry["base"]["series"] == "pytorch"
        and entry["base"]["compare_group"] == ours["compare_group"]
    )
    rows = gpu_anchors.to_rows([entry], 3)
    iterations = [r for r in rows if r["run_type"] == "iteration"]
    assert [r["device_time_s"] for r in iterations] == [s[0] for s in samples]
    assert [r["host_time_s"] for r in iterations] == [s[2] for s in samples]
    assert all(r["validated"] and r["series"] == "pytorch" for r in iterations)
    median = next(r for r in rows if r.get("aggregate_name") == "median")
    assert median["real_time"] == pytest.approx(81.0)  # µs
    assert iterations[0]["samples_per_second"] == pytest.approx(64 / 80e-6)
    # The table: ours eager and graph beside PyTorch's, the ratio of the medians.
    table = gpu_anchors.first_light_table(results, [entry])
    assert "| 100.0 µs | 81.0 µs | 0.81x | yes |" in table[2]
    assert "(ours graph) | 20.0 µs | 81.0 µs | 4.05x | yes |" in table[3]
    # Rows written by gpu_anchors never count as ours.
    assert (
        gpu_anchors.matching_row({"benchmarks": [dict(ours, series="pytorch")]}, family="mlp")
        is None
    )


SANITIZER_OUTPUT = """========= COMPUTE-SANITIZER
========= Invalid __global__ read of size 4 bytes
=========     at void offloadbench::gpu::(anonymous namespace)::sum_kernel<float>(double *, const T1 *)+0x1d0 in elementwise.cu:45
=========     by thread (0,0,0) in block (0,0,0)
=========
========= Error: Race reported between Write access at sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n+0x2b0
=========     and Read access at sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n+0x4c0 [256 hazards]
=========
========= Warning: Race reported between Write access at void offloadbench::gpu::matmul_kernel(float *)+0x80 in matmul.cu:49
=========     and Read access at void offloadbench::gpu::matmul_kernel(float *)+0x90 in matmul.cu:55 [2 hazards]
=========
========= Program hit cudaErrorInvalidValue (error 1) due to "invalid argument" on CUDA API call to cudaFuncSetAttribute.
=========     Saved host backtrace up to driver entry point at error
=========         Host Frame: [0x2ba4f] in libcudart.so.13
=========         Host Frame: [0x3b7a4f] in libcublasLt.so.13
=========         Host Frame: offloadbench::gpu::cublas_gemm(...) [0x1234] in /b/tests/gpu_tests
=========
========= Program hit cudaErrorInvalidDevicePointer on CUDA API call to cudaFree.
=========         Host Frame: [0x2ba4f] in libcuda.so.1
=========         Host Frame: offloadbench::DeviceBuffer::~DeviceBuffer() [0x99] in /b/tests/gpu_tests
=========
========= ERROR SUMMARY: 4 errors
[  PASSED  ] 2 tests.
"""


def test_sanitizer_findings_are_ours_or_a_librarys_by_their_frame():
    ours, library = load_gpu_check().classify_findings(SANITIZER_OUTPUT)
    assert [f.split(" (at")[0].split(" between")[0] for f in ours] == [
        "Invalid __global__ read of size 4 bytes",
        "Warning: Race reported",
        "Program hit cudaErrorInvalidDevicePointer on CUDA API call to cudaFree.",
    ]
    assert "sum_kernel" in ours[0] and "DeviceBuffer" in ours[2]
    # cuBLAS's own kernel, and an error inside cuBLAS (below the runtime, above our call): listed apart.
    assert len(library) == 2 and "sm90_xmma" in library[0] and "libcublasLt" in library[1]
    assert load_gpu_check().classify_findings("========= ERROR SUMMARY: 0 errors\n") == ([], [])


def test_each_sanitizer_runs_its_own_listed_tests(gpu_tests, tmp_path):
    sys.path.insert(0, str(SCRIPT.parent))
    import gpu_check_plan

    correctness = {t["name"] for t in gpu_tests if t["kind"] == "correctness"}
    for tool in gpu_check_plan.SANITIZER_TOOLS:
        names = [
            t["name"] for t in gpu_check_plan.sanitizer_tests(tool, gpu_tests)
        ]  # raises on a renamed test
        assert names
        if tool == "memcheck":
            assert set(names) == correctness
    assert set(gpu_check_plan.SHARED_MEMORY_TESTS) < set(gpu_check_plan.OUR_KERNEL_TESTS)
    renamed = [dict(t, name=t["name"] + "Renamed") for t in gpu_tests]
    with pytest.raises(ValueError, match="racecheck: no GPU test named"):
        gpu_check_plan.sanitizer_tests("racecheck", renamed)
    out = tmp_path / "out"
    gpu_check("--stage", "sanitize", "--dry-run", "--out", out, env=NO_GPU)
    log = (out / "sanitize.log").read_text()
    for name, run in gpu_check_plan.SANITIZER_TOOLS.items():
        if name != "memcheck":
            wanted = (
                f"--tool {run.tool or name} --error-exitcode 86 {' '.join(run.options)}".replace(
                    "  ", " "
                )
            )
            assert any(
                wanted in line and f"--gtest_filter={':'.join(run.tests)}" in line
                for line in log.splitlines()
            ), name


def test_reduced_precision_initcheck_findings_are_listed_with_their_reason(tmp_path):
    sys.path.insert(0, str(SCRIPT.parent))
    import gpu_check_plan

    runs = gpu_check_plan.SANITIZER_TOOLS
    # Our kernels stay under initcheck in fp32; only the reduced precisions run apart, with a reason.
    assert (
        runs["initcheck"].env == {"OFFLOADBENCH_GPU_TEST_PRECISIONS": "fp32"}
        and not runs["initcheck"].library_writes
    )
    apart = [run for run in runs.values() if run.library_writes]
    assert [run.tool for run in apart] == ["initcheck"]
    assert "fp32" not in apart[0].env["OFFLOADBENCH_GPU_TEST_PRECISIONS"]
    gpu_check = load_gpu_check()
    assert (
        gpu_check.reported_errors(
            "========= ERROR SUMMARY: 16384 errors\n"
            "========= ERROR SUMMARY: 16284 errors were not printed. Use --print-limit\n"
        )
        == 16384
    )
    assert (
        gpu_check.reported_errors(
            "========= RACECHECK SUMMARY: 0 hazards displayed (2 errors, 1 warnings)\n"
        )
        == 2
    )
    assert gpu_check.reported_errors("========= ERROR SUMMARY: 0 errors\n") == 0


def test_regression_plan_counts_the_selftests_runs_from_its_own_probe(
    offloadbench_bin, monkeypatch
):
    sys.path.insert(0, str(SCRIPT.parent))
    import gpu_check_plan

    plan = gpu_check_plan.regression_plan(offloadbench_bin)
    assert plan["count"] == 2 + 2 * 2  # A/A runs, then two runs at each of +5% and +10%
    assert 0 < plan["estimate_s"] < plan["worst_s"] <= gpu_check_plan.STAGE_LIMIT_S
    module = gpu_check_plan.selftest_module()
    monkeypatch.setitem(module.GPU_PROBE, "transfer", ["transfer/h2d/pinned/3MiB"])
    monkeypatch.setattr(gpu_check_plan, "selftest_module", lambda: module)
    with pytest.raises(ValueError, match="transfer/h2d/pinned/3MiB"):
        gpu_check_plan.regression_plan(offloadbench_bin)
