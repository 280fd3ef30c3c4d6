"""lab/tools/regression-selftest's summary, from synthetic A/B results files: false alarms counted per
verdict and per run, slowdowns counted as caught only when SLOWER, and what the A/A spread allows."""

import json
import subprocess
import sys

from conftest import ROOT

SCRIPT = ROOT / "lab" / "tools" / "regression-selftest"
QUIET = "compute/sgemm/square/openblas/cpu_1t/256"
NOISY = "mlp/784-128-10/train_sgd/b64/cpu_1t"


def row(name, verdict, half_width):
    return {
        "name": f"{name}/real_time",
        "verdict": verdict,
        "delta": 0.02,
        "interval_low": -half_width,
        "interval_high": half_width,
    }


def write(folder, file_name, rows):
    (folder / file_name).write_text(json.dumps({"benchmarks": rows}))


def summarize(folder):
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--summarize", "--out", str(folder)],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_counts_false_alarms_and_says_what_the_spread_allows(tmp_path):
    write(tmp_path, "aa01.json", [row(QUIET, "SAME", 0.010), row(NOISY, "INCONCLUSIVE", 0.050)])
    write(tmp_path, "aa02.json", [row(QUIET, "INCONCLUSIVE", 0.012), row(NOISY, "FASTER", 0.040)])
    write(tmp_path, "slow10-01.json", [row(QUIET, "SLOWER", 0.01), row(NOISY, "SLOWER", 0.04)])
    result = summarize(tmp_path)
    out = result.stdout
    assert "per benchmark verdict: 1/4 = 25.0%" in out, out
    assert "per run (any alarm):   1/2 = 50.0%" in out, out
    assert (
        f"{QUIET}: ±1.1% -> caught about half the time above ~+3.1%, nearly always above ~+4.2% "
        "(+5% caught nearly always)" in out
    ), out
    assert (
        f"{NOISY}: ±4.5% -> caught about half the time above ~+6.5%, nearly always above ~+11.0% "
        "(+5% not within reach" in out
    ), out
    assert (
        "| mlp | `" + NOISY + "` | +10% | 1/1 = 100.0% [2.5, 100.0] | 0 | 0 | +10% at the edge"
        in out
    ), out
    assert result.returncode == 1, "a 25% false-alarm rate misses the targets"


def test_a_spread_between_h_and_2h_is_at_the_edge(tmp_path):
    write(
        tmp_path, "aa01.json", [row(QUIET, "INCONCLUSIVE", 0.020)]
    )  # delta 2% + h 2% = 4% < 5% < 6%
    out = summarize(tmp_path).stdout
    assert "(+5% at the edge: caught in some runs, INCONCLUSIVE in others)" in out, out


def test_a_slowdown_called_same_or_inconclusive_is_not_caught(tmp_path):
    write(tmp_path, "aa01.json", [row(QUIET, "SAME", 0.01)])
    write(tmp_path, "slow10-01.json", [row(QUIET, "SAME", 0.01)])
    write(tmp_path, "slow10-02.json", [row(QUIET, "INCONCLUSIVE", 0.01)])
    out = summarize(tmp_path).stdout
    assert f"| compute | `{QUIET}` | +10% | 0/2 = 0.0%" in out, out
    assert "| 1 | 1 |" in out, out  # one SAME, one INCONCLUSIVE


def test_families_keeps_a_subset_and_rejects_unknown_ones(tmp_path):
    write(tmp_path, "aa01.json", [row(QUIET, "SAME", 0.01)])
    write(tmp_path, "slow5-01.json", [row(QUIET, "SLOWER", 0.01), row(NOISY, "SLOWER", 0.01)])
    run = lambda families: subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--summarize",
            "--out",
            str(tmp_path),
            "--families",
            families,
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    kept = run("compute")
    assert "smallest slowdown caught >= 80%: compute: +5%" in kept.stdout, kept.stdout
    assert "smallest slowdown caught >= 80%: mlp" not in kept.stdout, kept.stdout
    bad = run("compute,gemm")
    assert (
        bad.returncode == 2
        and "--families 'compute,gemm'" in bad.stderr
        and bad.stderr.count("\n") == 1
    ), bad


def load_selftest():
    import importlib.machinery
    import importlib.util

    loader = importlib.machinery.SourceFileLoader("regression_selftest", str(SCRIPT))
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
    loader.exec_module(module)
    return module


def test_the_probe_filter_matches_cases_with_a_min_time_of_their_own():
    import re

    selftest = load_selftest()
    names = [n for family in selftest.GPU_PROBE.values() for n in family]
    pattern = re.compile(selftest.probe_filter(names))
    # The GPU compute cases set their own MinTime; Google Benchmark puts it in the run's name.
    for run in [
        "compute/triad/fp32/gpu_kernel/64Mi/min_time:0.002/manual_time",
        "compute/sgemm/square/cublas_fp32/gpu_kernel/4096/min_time:0.002/manual_time",
        "transfer/h2d/pinned/16MiB/manual_time",
        "transfer/d2h/pinned/16MiB",
    ]:
        assert pattern.search(run), run
        assert selftest.probe_row_name(run) in names, run
    for other in [
        "compute/triad/fp32/gpu_kernel/64Mi0/manual_time",
        "compute/triad/fp32/gpu_kernel/64Mi/real_time_x",
        "transfer/h2d/pinned/16MiB/min_time:abc/manual_time",
    ]:
        assert not pattern.search(other), other


def test_a_verdict_without_an_interval_is_counted_but_not_measured(tmp_path):
    # Too few rounds for an interval: ab writes null bounds; the verdict still counts.
    write(
        tmp_path,
        "aa01.json",
        [
            row(QUIET, "SAME", 0.01),
            dict(row(NOISY, "INCONCLUSIVE", 0.05), interval_low=None, interval_high=None),
        ],
    )
    done = summarize(tmp_path)
    assert done.returncode == 0, done.stderr
    assert "A/A false alarms, per benchmark verdict: 0/2" in done.stdout, done.stdout
    assert NOISY not in done.stdout.split("what the A/A spread allows")[1], done.stdout
