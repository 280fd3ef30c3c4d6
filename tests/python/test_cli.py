"""The offloadbench CLI as a user meets it: bad input gets one line and exit 2 with no file written;
a quick run writes a file that conforms to docs/results.schema.json; an interrupted run keeps what
finished."""

import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import tempfile
import time

import jsonschema
import pytest

from conftest import ROOT, load_json

SCHEMA = json.loads((ROOT / "docs" / "results.schema.json").read_text())


def validate(doc):
    jsonschema.validate(doc, SCHEMA)


@pytest.mark.parametrize(
    "args, message",
    [
        (["run", "--suite", "nosuch"], "unknown suite 'nosuch'"),
        (["run", "--suite", "transfer,bogus"], "unknown suite 'bogus'"),
        (["run", "--sizes", "12XB"], "malformed size '12XB'"),
        (["run", "--sizes", "0"], "malformed size '0'"),
        (["run", "--sizes", "4KiB,,1MiB"], "malformed size"),
        (["run", "--device", "7"], "--device 7 is out of range"),
        (["run", "--device", "gpu0"], "is not a GPU index"),
        (
            ["run", "--out", "/nonexistent-dir/r.json"],
            "--out '/nonexistent-dir/r.json': folder '/nonexistent-dir'",
        ),
        (["run", "--quick", "--full"], "--quick and --full cannot be used together"),
        (["run", "--repetitions", "0"], "--repetitions 0 is out of range"),
        (["run", "--repetitions", "many"], "repetitions"),
        (["run", "--", "--not_a_benchmark_flag"], "is not a Google Benchmark flag"),
        (
            ["run", "--", "--benchmark_nonsense=1"],
            "is not a Google Benchmark flag offloadbench passes on",
        ),
        (["run", "--bogus-option"], "bogus-option"),
        (["frobnicate"], "frobnicate"),
        ([], "subcommand"),
    ],
)
def test_bad_input_gives_one_line_exit_2_and_no_file(run_offloadbench, tmp_path, args, message):
    result = run_offloadbench(*args, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert message in lines[0]
    assert not list(tmp_path.rglob("*.json")), "bad input must not leave a results file"


def test_a_misspelt_cpu_gemm_pin_is_bad_input(run_offloadbench, tmp_path):
    env = dict(os.environ, OFFLOADBENCH_CPU_GEMM="MKL")
    result = run_offloadbench("run", "--suite", "mlp", "--device", "cpu", cwd=tmp_path, env=env)
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "OFFLOADBENCH_CPU_GEMM='MKL' is not one of OpenBLAS" in lines[0], (
        result.stderr
    )
    assert not list(tmp_path.rglob("*.json"))


def test_out_that_is_a_directory_is_rejected(run_offloadbench, tmp_path):
    result = run_offloadbench("run", "--out", tmp_path)
    assert result.returncode == 2
    assert "is a directory" in result.stderr


def test_list_and_info_answer_without_a_gpu(run_offloadbench):
    listing = run_offloadbench("list", "--json")
    assert listing.returncode == 0
    cases = json.loads(listing.stdout)
    assert any(c["fields"]["family"] == "transfer" for c in cases)
    assert all("family" in c["fields"] for c in cases)
    info = run_offloadbench("info", "--json")
    assert info.returncode == 0
    facts = json.loads(info.stdout)
    assert facts["host"]["logical_cpus"] >= 1
    if not facts["cuda"]["gpus"]:
        assert facts["cuda"]["unavailable_reason"]
    assert run_offloadbench("info").returncode == 0


def test_quick_run_writes_a_conforming_file(run_offloadbench, tmp_path):
    out = tmp_path / "quick.json"
    result = run_offloadbench(
        "run", "--quick", "--out", out, "--repetitions", "2", "--", "--benchmark_min_time=0.005"
    )
    assert result.returncode == 0, result.stderr
    assert f"results: {out}" in result.stdout
    doc = load_json(out)
    validate(doc)
    ctx = doc["context"]["offloadbench"]
    assert ctx["incomplete"] is False and ctx["end_time_utc"] >= ctx["start_time_utc"]
    rows = [r for r in doc["benchmarks"] if r["run_type"] == "iteration"]
    assert rows and {r["repetition_index"] for r in rows} == {0, 1}, "per-repetition rows are kept"
    measured = [r for r in rows if not r["skipped"]]
    assert measured, "the host baseline runs on any machine"
    for row in measured:
        assert row["validated"] is not False, row
        assert row["real_time"] > 0 and row["iterations"] > 0
    gpu_rows = [r for r in rows if r.get("device") != "cpu"]
    if not doc["context"]["cuda"]["gpus"]:
        reason = doc["context"]["cuda"]["unavailable_reason"]
        assert gpu_rows and all(r["skipped"] and r["skip_reason"] == reason for r in gpu_rows)
    assert not list(tmp_path.glob("*.tmp.*")), "no temporary file is left behind"


def test_google_benchmark_flags_pass_through(run_offloadbench, tmp_path):
    out = tmp_path / "filtered.json"
    result = run_offloadbench(
        "run",
        "--suite",
        "transfer",
        "--sizes",
        "4KiB",
        "--repetitions",
        "1",
        "--out",
        out,
        "--",
        "--benchmark_filter=host_memcpy/pretouched",
        "--benchmark_min_time=0.001",
    )
    assert result.returncode == 0, result.stderr
    names = {r["name"] for r in load_json(out)["benchmarks"]}
    assert names and all("host_memcpy/pretouched" in n for n in names)


def test_interrupted_run_keeps_what_finished(offloadbench_bin, tmp_path):
    out = tmp_path / "interrupted.json"
    proc = subprocess.Popen(
        [
            offloadbench_bin,
            "run",
            "--suite",
            "transfer",
            "--device",
            "cpu",
            "--full",
            "--repetitions",
            "3",
            "--out",
            str(out),
            "--",
            "--benchmark_min_time=0.05",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.time() + 60
        while time.time() < deadline:  # wait until a few benchmarks have finished
            if out.exists():
                try:
                    if len(load_json(out)["benchmarks"]) >= 6:
                        break
                except (json.JSONDecodeError, KeyError):
                    pytest.fail("a reader saw a half-written results file")
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    doc = load_json(out)
    validate(doc)
    assert doc["context"]["offloadbench"]["incomplete"] is True
    assert len(doc["benchmarks"]) >= 6
    assert not [p for p in os.listdir(tmp_path) if ".tmp." in p]


def test_a_filter_that_matches_nothing_is_bad_input(run_offloadbench, tmp_path):
    out = tmp_path / "none.json"
    result = run_offloadbench(
        "run", "--suite", "transfer", "--out", out, "--", "--benchmark_filter=^nothing$"
    )
    assert result.returncode == 2
    assert "no benchmark matches" in result.stderr
    assert not out.exists()


# history DIR goes on past an entry it cannot read, and names it with the real reason.
NIGHT = ROOT / "tests" / "data" / "quick_cpu_reps10.json"


def nightly_folder(folder, runs=3):
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(runs):
        shutil.copy(NIGHT, folder / f"r{i}.json")
    return folder


def test_history_leaves_out_a_link_loop_by_name_and_reads_the_rest(run_offloadbench, tmp_path):
    nightly = nightly_folder(tmp_path / "nightly")
    (nightly / "loop.json").symlink_to("loop.json")
    result = run_offloadbench("history", nightly)
    assert result.returncode == 0, result.stderr
    assert "history of" in result.stdout and ": 3 runs" in result.stdout, result.stdout
    assert (
        f"ignored {nightly / 'loop.json'}: cannot read: Too many levels of symbolic links"
        in result.stdout
    )


@pytest.fixture
def unprivileged(tmp_path):
    """(folder, preexec_fn): a folder the command can reach, and how to run it without the right to read
    what chmod forbids. Root reads everything, so as root the command runs as nobody (uid 65534)."""
    if os.geteuid() != 0:
        yield tmp_path, None
        return
    folder = pathlib.Path(
        tempfile.mkdtemp(prefix="ob-unprivileged-")
    )  # tmp_path's parents are root's 0700
    folder.chmod(0o755)

    def drop():
        os.setgroups([])
        os.setgid(65534)
        os.setuid(65534)

    try:
        yield folder, drop
    finally:
        for path in [folder, *folder.rglob("*")]:
            if not path.is_symlink():
                path.chmod(0o755)
        shutil.rmtree(folder)


def run_as(preexec, offloadbench_bin, *args):
    try:
        return subprocess.run(
            [offloadbench_bin, *map(str, args)],
            capture_output=True,
            text=True,
            timeout=120,
            preexec_fn=preexec,
        )
    except PermissionError:
        pytest.skip(f"{offloadbench_bin} cannot be run as an unprivileged user")


def test_history_names_an_unreadable_file_and_reads_the_rest(unprivileged, offloadbench_bin):
    folder, preexec = unprivileged
    nightly = nightly_folder(folder / "nightly")
    for path in [nightly, *nightly.iterdir()]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    secret = nightly / "secret.json"
    shutil.copy(NIGHT, secret)
    secret.chmod(0)
    result = run_as(preexec, offloadbench_bin, "history", nightly)
    if result.returncode == 126:
        pytest.skip(result.stderr)
    assert result.returncode == 0, result.stderr
    assert ": 3 runs" in result.stdout, result.stdout
    assert f"ignored {secret}: cannot read: Permission denied" in result.stdout


def test_history_of_an_unreadable_folder_says_so(unprivileged, offloadbench_bin):
    folder, preexec = unprivileged
    nightly = nightly_folder(folder / "nightly")
    nightly.chmod(0)
    result = run_as(preexec, offloadbench_bin, "history", nightly)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2, result.stderr
    assert lines == [f"offloadbench: {nightly}: cannot list this directory: Permission denied"], (
        result.stderr
    )


def test_version_prints_the_version(run_offloadbench):
    result = run_offloadbench("--version")
    assert result.returncode == 0, result.stderr
    assert re.fullmatch(r"offloadbench \S+ \(\S+, \S+\)\n", result.stdout), result.stdout


def test_list_prints_one_line_per_group_sizes_ascending_with_skips_marked(run_offloadbench):
    result = run_offloadbench("list", "--suite", "compute")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    every_case = json.loads(run_offloadbench("list", "--suite", "compute", "--json").stdout)
    assert len(lines) < len(every_case) / 5  # groups, not cases
    assert max(len(line) for line in lines) < 400
    triad = next(line for line in lines if line.startswith("  compute/triad/fp32 "))
    assert "gpu_kernel, gpu_pinned, gpu_pageable, cpu_1t" in triad
    assert (
        "elements 1Ki, 64Ki, 1Mi, 16Mi, 64Mi" in triad
    )  # ascending, though registered largest first
    # A kernel variant's group lists its sizes too, not its variant's name once per size.
    variant = next(
        line for line in lines if line.startswith("  compute/triad/fp32 four_per_thread ")
    )
    assert "elements 1Ki, 64Ki, 1Mi, 16Mi, 64Mi" in variant and "kernel:" not in variant, variant
    info = json.loads(run_offloadbench("info", "--json").stdout)
    reason = info["cuda"].get("unavailable_reason")
    if not info["cuda"]["gpus"] and reason:
        assert f"[skipped here: 15 of them, {reason}]" in triad
    else:
        assert "skipped here" not in triad


def test_sizes_are_refused_where_a_sweep_ignores_them(run_offloadbench, tmp_path):
    for suites in ("mlp", "compute,batches", "all"):
        result = run_offloadbench(
            "run",
            "--suite",
            suites,
            "--device",
            "cpu",
            "--sizes",
            "1Mi",
            "--out",
            tmp_path / "r.json",
        )
        assert result.returncode == 2 and len(result.stderr.strip().splitlines()) == 1, (
            result.stderr
        )
        assert (
            "--sizes does not apply to" in result.stderr
            and "compute: elements per array" in result.stderr
        )
    assert not (tmp_path / "r.json").exists()
    assert "compute: elements per array" in run_offloadbench("run", "--help").stdout


def test_a_machine_without_a_driver_is_told_so(run_offloadbench):
    facts = json.loads(run_offloadbench("info", "--json").stdout)
    if facts["cuda"]["gpus"] or pathlib.Path("/proc/driver/nvidia").exists():
        pytest.skip("an NVIDIA driver is installed here")
    if "built without CUDA" in facts["cuda"]["unavailable_reason"]:
        pytest.skip("this build has no CUDA runtime to ask")
    assert facts["cuda"]["unavailable_reason"] == "no usable GPU: no NVIDIA driver installed"
