"""offloadbench ab end to end, with fake BASE/NEW programs that behave as `offloadbench run` does (they
write a results file) but with known timings: a slowdown, none, noise, GPU rows with throttled samples."""
import json
import os
import pathlib
import stat
import subprocess
import sys

import pytest

from conftest import load_json

FAKE = '''#!{python}
# A stand-in for offloadbench: `run ... --out FILE -- FLAGS` writes a results file with known times.
import json, math, random, re, sys
FACTORS = {factors}
args = sys.argv[1:]
with open({calls!r}, "a") as log:
    log.write(json.dumps(args) + "\\n")
with open({calls!r}) as log:
    call = len(log.read().splitlines())  # 1, 2, ...: two calls per A/B round
random.seed(call)
out = args[args.index("--out") + 1]
flags = args[args.index("--") + 1:]
pattern = next((f.split("=", 1)[1] for f in flags if f.startswith("--benchmark_filter=")), "")
drift = 1 + 0.2 * math.sin((call - 1) // 2)  # the machine drifts from round to round by up to ±20%
rows = []
for name, (seconds, noise, gpu) in {{"cpu/steady": (1e-3, 0.002, False), "cpu/slowed": (2e-3, 0.002, False),
                                     "cpu/noisy": (1e-3, 0.3, False), "gpu/kernel": (5e-4, 0.002, True)}}.items():
    if pattern and not re.search(pattern, name):
        continue
    for i in range(3):
        row = {{"name": name, "run_type": "iteration", "repetition_index": i, "time_unit": "ns",
               "real_time": 1e9 * seconds * drift * FACTORS.get(name, 1.0) * random.lognormvariate(0, noise),
               "device": 0 if gpu else "cpu"}}
        if gpu:
            row["clocks_locked"] = False
            row["clock_throttled"] = i == 2
            if i == 2:
                row["real_time"] *= 3  # what a throttled sample looks like; it must be dropped
        rows.append(row)
doc = {{"context": {{"offloadbench": {{"schema_version": 1}}, "machine_fingerprint": {{"cpu_model": "fake"}}}},
        "benchmarks": rows}}
with open(out, "w") as f:
    json.dump(doc, f)
'''


def fake(path, calls, factors=None):
    path.write_text(FAKE.format(python=sys.executable, factors=repr(factors or {}), calls=str(calls)))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def calls_in(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_ab_finds_a_slowdown_drops_throttled_samples_and_writes_its_outputs(run_offloadbench, tmp_path):
    calls = tmp_path / "calls.txt"
    base = fake(tmp_path / "base", calls)
    new = fake(tmp_path / "new", calls, {"cpu/slowed": 1.10, "gpu/kernel": 1.0})
    out, md = tmp_path / "ab.json", tmp_path / "ab.md"
    done = run_offloadbench("ab", base, new, "--rounds", "10", "--max-rounds", "10", "--seed", "3", "--suite",
                            "transfer", "--out", out, "--markdown", md)
    assert done.returncode == 1, done.stdout + done.stderr
    result = load_json(out)
    rows = {r["name"]: r for r in result["benchmarks"]}
    assert rows["cpu/slowed"]["verdict"] == "SLOWER"
    assert 0.08 < rows["cpu/slowed"]["change"] < 0.12
    assert rows["cpu/slowed"]["interval_low"] < rows["cpu/slowed"]["change"] < rows["cpu/slowed"]["interval_high"]
    assert rows["cpu/steady"]["verdict"] == "SAME"  # the ±20% drift between rounds cancels in the pairs
    assert rows["gpu/kernel"]["gpu"] and rows["gpu/kernel"]["delta"] == pytest.approx(0.01)
    assert rows["gpu/kernel"]["verdict"] == "SAME"  # its throttled (3x) samples were dropped
    assert rows["gpu/kernel"]["dropped_throttled"] == 20
    assert result["context"]["same_content"] is False
    assert {r["first"] for r in result["rounds"]} == {"BASE", "NEW"}  # coin flips, not ABAB
    invocations = calls_in(calls)
    assert len(invocations) == 20
    assert all(a[0] == "run" and "--benchmark_enable_random_interleaving=true" in a for a in invocations)
    assert "throttled" in done.stdout and "not locked" in done.stdout
    text = md.read_text()
    assert "| SLOWER | `cpu/slowed`" in text and "**Note:**" in text


def test_ab_of_identical_programs_says_so_and_gives_inconclusive_ones_extra_rounds(run_offloadbench, tmp_path):
    calls = tmp_path / "calls.txt"
    base = fake(tmp_path / "a", calls)
    (tmp_path / "copy").mkdir()
    new = tmp_path / "copy" / "a"
    new.write_bytes(base.read_bytes())
    new.chmod(base.stat().st_mode)
    out = tmp_path / "aa.json"
    done = run_offloadbench("ab", base, new, "--rounds", "6", "--max-rounds", "9", "--extra-batch", "3",
                            "--seed", "1", "--out", out)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "same content" in done.stdout
    result = load_json(out)
    assert result["context"]["same_content"] is True
    assert result["counts"]["SLOWER"] == result["counts"]["FASTER"] == 0
    rows = {r["name"]: r for r in result["benchmarks"]}
    assert rows["cpu/noisy"]["verdict"] == "INCONCLUSIVE"  # ±30% per process: 9 rounds cannot tell
    assert rows["cpu/noisy"]["rounds"] == 9 and rows["cpu/steady"]["rounds"] == 6
    extra = result["rounds"][6:]
    assert len(extra) == 3 and all(r["benchmarks"] == ["cpu/noisy"] for r in extra)
    assert all("--benchmark_filter=^(cpu/noisy)$" in a for a in calls_in(calls)[12:])


@pytest.mark.parametrize("args, problem", [
    (["missing", "NEW"], "BASE 'missing' is not a file"),
    (["BASE", "NEW", "--rounds", "0"], "--rounds"),
    (["BASE", "NEW", "--max-rounds", "3"], "--max-rounds"),
    (["BASE", "NEW", "--delta-cpu", "0"], "--delta-cpu"),
    (["BASE", "NEW", "--", "--benchmark_repetitions=9"], "--benchmark_repetitions"),
    (["BASE", "NOT_EXECUTABLE"], "is not executable"),
])
def test_ab_bad_input_is_one_line_and_exit_2(run_offloadbench, tmp_path, args, problem):
    calls = tmp_path / "calls.txt"
    paths = {"BASE": str(fake(tmp_path / "base", calls)), "NEW": str(fake(tmp_path / "new", calls)),
             "NOT_EXECUTABLE": str(tmp_path / "plain")}
    (tmp_path / "plain").write_text("")
    done = run_offloadbench("ab", *[paths.get(a, a) for a in args], "--out", tmp_path / "ab.json")
    assert done.returncode == 2, done.stdout + done.stderr
    assert problem in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert not calls.exists()  # nothing was run
    assert not (tmp_path / "ab.json").exists()


def test_a_malformed_injected_slowdown_is_bad_input_before_anything_runs(run_offloadbench, tmp_path):
    out = tmp_path / "r.json"
    env = dict(os.environ, OFFLOADBENCH_INJECT_SLOWDOWN="triad=five")
    done = run_offloadbench("run", "--suite", "compute", "--device", "cpu", "--out", out, env=env)
    assert done.returncode == 2
    assert "OFFLOADBENCH_INJECT_SLOWDOWN" in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert not out.exists()
