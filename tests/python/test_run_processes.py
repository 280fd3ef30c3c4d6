"""run --processes N: the repetitions of every benchmark come from N fresh processes and land in one
results file that validates against the schema; bad counts are bad input; an interrupted run keeps
what finished; nothing is left beside the file."""

import json
import os
import signal
import subprocess
import time

import jsonschema
import pytest

from conftest import ROOT, load_json

SCHEMA = json.loads((ROOT / "docs" / "results.schema.json").read_text())
FILTER = "--benchmark_filter=compute/triad/fp32/cpu_1t/(1Ki|64Ki)/"


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["--repetitions", "3", "--processes", "4"],
            "--processes 4 is out of range (1 to --repetitions, 3)",
        ),
        (["--processes", "0"], "--processes 0 is out of range"),
        # Google Benchmark matches decorated names only when it runs: the first process says so, as one line.
        (
            ["--processes", "2", "--", "--benchmark_filter=compute/triad/fp32/cpu_1t/1Ki$"],
            "no benchmark matches",
        ),
    ],
)
def test_a_process_count_out_of_range_is_bad_input(run_offloadbench, tmp_path, args, message):
    out = tmp_path / "r.json"
    result = run_offloadbench(
        "run", "--suite", "compute", "--device", "cpu", "--out", out, *args, cwd=tmp_path
    )
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and message in lines[0], result.stderr
    assert not list(tmp_path.iterdir()), "no file, no lock and no processes' folder may be left"


def test_repetitions_from_several_processes_make_one_valid_file(run_offloadbench, tmp_path):
    out = tmp_path / "p.json"
    result = run_offloadbench(
        "run",
        "--suite",
        "compute",
        "--device",
        "cpu",
        "--repetitions",
        "4",
        "--processes",
        "3",
        "--out",
        out,
        "--",
        FILTER,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert "process 3 of 3 done" in result.stderr and f"results: {out}" in result.stdout
    doc = load_json(out)
    jsonschema.validate(doc, SCHEMA)
    ob = doc["context"]["offloadbench"]
    assert (ob["repetitions"], ob["processes"], ob["processes_finished"], ob["incomplete"]) == (
        4,
        3,
        3,
        False,
    )
    assert "--processes" in ob["command_line"]
    rows = doc["benchmarks"]
    names = {r["name"] for r in rows}
    assert len(names) == 2
    for name in names:
        mine = [r for r in rows if r["name"] == name]
        assert [r["process"] for r in mine] == [0, 0, 1, 2]  # 4 over 3: 2, 1, 1
        assert [r["repetition_index"] for r in mine] == [0, 1, 2, 3]
        assert all(r["run_type"] == "iteration" and r["real_time"] > 0 for r in mine)
        # Later processes run the first one's iteration count and batch (no search of their own), under
        # the case's own name (Google Benchmark would add "/iterations:N").
        assert len({(r["iterations"], r["calls_per_batch"]) for r in mine}) == 1, mine
        assert "iterations:" not in name
    assert "analysis" in doc
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.json"], "the processes' folder must go"


def test_a_file_of_several_processes_keeps_the_spread_between_them(run_offloadbench, tmp_path):
    # compare judges such files by that spread: by default none of their cases is measured again in one
    # more process (at a --benchmark_min_time this small, a case often spreads by more than 20%).
    out = tmp_path / "p.json"
    env = {k: v for k, v in os.environ.items() if k != "OFFLOADBENCH_REMEASURE_UNSTEADY"}
    result = run_offloadbench(
        "run",
        "--suite",
        "compute",
        "--device",
        "cpu",
        "--repetitions",
        "3",
        "--processes",
        "3",
        "--out",
        out,
        "--",
        FILTER,
        "--benchmark_min_time=0.0001",
        cwd=tmp_path,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    assert "measuring them again" not in result.stderr
    assert {r["run_type"] for r in load_json(out)["benchmarks"]} == {"iteration"}


def start_three_processes(offloadbench_bin, out, **popen):
    """A run of three processes long enough to be stopped part way."""
    return subprocess.Popen(
        [
            offloadbench_bin,
            "run",
            "--suite",
            "compute",
            "--device",
            "cpu",
            "--repetitions",
            "3",
            "--processes",
            "3",
            "--out",
            str(out),
            "--",
            "--benchmark_filter=compute/triad/fp32/cpu_1t",
        ],
        stdout=subprocess.DEVNULL,
        **popen,
    )


def test_an_interrupted_run_keeps_the_processes_that_finished(offloadbench_bin, tmp_path):
    out = tmp_path / "cut.json"
    proc = start_three_processes(offloadbench_bin, out, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 120
        while time.time() < deadline and not out.exists() and proc.poll() is None:
            time.sleep(0.05)  # written once the first process has finished
        assert proc.poll() is None, "the run ended before it could be interrupted"
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + signal.SIGINT, stderr
    assert "interrupted; what finished is in" in stderr
    doc = load_json(out)
    jsonschema.validate(doc, SCHEMA)
    ob = doc["context"]["offloadbench"]
    assert ob["incomplete"] is True and ob["stopped_because"] == "interrupted"
    assert ob["processes_finished"] >= 1
    assert {r["process"] for r in doc["benchmarks"]} >= {0}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cut.json"]


def test_the_folder_of_a_killed_run_is_removed_by_the_next_one(
    offloadbench_bin, run_offloadbench, tmp_path
):
    """SIGKILL leaves no chance to clean up: the next run beside the same file removes what is left."""
    out = tmp_path / "k.json"
    proc = start_three_processes(
        offloadbench_bin, out, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        deadline = time.time() + 60
        while time.time() < deadline and not list(tmp_path.glob(".k.json.processes-*")):
            time.sleep(0.02)
        (left,) = tmp_path.glob(".k.json.processes-*")
        assert left.name.startswith(f".k.json.processes-{proc.pid}-")
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert left.is_dir(), "a killed run cannot remove its folder"
    result = run_offloadbench(
        "run",
        "--suite",
        "compute",
        "--device",
        "cpu",
        "--repetitions",
        "2",
        "--processes",
        "2",
        "--out",
        out,
        "--",
        FILTER,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.json"], (
        "the killed run's folder must go"
    )


def two_process_run(run_offloadbench, tmp_path):
    """A small run of 4 repetitions from 2 processes: its path and its contents."""
    multi = tmp_path / "multi.json"
    done = run_offloadbench(
        "run",
        "--suite",
        "compute",
        "--device",
        "cpu",
        "--repetitions",
        "4",
        "--processes",
        "2",
        "--out",
        multi,
        "--",
        FILTER,
    )
    assert done.returncode == 0, done.stderr
    return multi, load_json(multi)


def test_compare_names_files_whose_repetitions_come_from_one_process(run_offloadbench, tmp_path):
    multi, doc = two_process_run(run_offloadbench, tmp_path)
    slowed = json.loads(json.dumps(doc))
    victim = slowed["benchmarks"][0]["name"]
    for row in slowed["benchmarks"]:
        if row["name"] == victim:
            row["real_time"] *= (
                3  # not SAME, whatever the verdict: the note is for files that say more than SAME
            )
    single = json.loads(json.dumps(doc))
    del single["context"]["offloadbench"]["processes"]
    paths = {}
    for name, content in (("slowed", slowed), ("single", single)):
        paths[name] = tmp_path / f"{name}.json"
        paths[name].write_text(json.dumps(content))
    note = "ran in one process"
    both_multi = run_offloadbench("compare", multi, paths["slowed"], "--json", tmp_path / "c1.json")
    assert note not in both_multi.stdout
    c1 = load_json(tmp_path / "c1.json")
    assert c1["processes"] == {"base": 2, "new": 2}
    # Files of several processes are compared by their fastest processes, given enough benchmarks to
    # learn the pair's noise from; each tested row says which test judged it and where its floors are.
    floors = c1["run_pair_noise"]["benchmarks"] >= 10
    assert c1["run_pair_noise"]["test"] == ("floor" if floors else "welch")
    tested = [r for r in c1["rows"] if r["test"]]
    assert tested and all(r["test"] == ("floor" if floors else "welch") for r in tested)
    assert all(0 < r["base_fastest"] <= r["base_median"] for r in tested)
    one_single = run_offloadbench(
        "compare", paths["single"], paths["slowed"], "--json", tmp_path / "c2.json"
    )
    assert (
        "next: BASE ran in one process: remeasure with run --repetitions 10 --processes 10"
        in one_single.stdout
    ), one_single.stdout
    c2 = load_json(tmp_path / "c2.json")
    assert c2["processes"] == {"base": 1, "new": 2}
    assert c2["run_pair_noise"]["test"] == "welch"


def test_compare_history_reads_three_or_more_runs_of_this_machine_with_processes(
    run_offloadbench, tmp_path
):
    multi, doc = two_process_run(run_offloadbench, tmp_path)
    history = tmp_path / "history"
    history.mkdir()

    def earlier(name, day, processes=2, cpu=None):
        run = json.loads(json.dumps(doc))
        run["context"]["offloadbench"]["start_time_utc"] = f"2026-01-0{day}T00:00:00Z"
        run["context"]["offloadbench"]["processes"] = processes
        if cpu:
            run["context"]["machine_fingerprint"]["cpu_model"] = cpu
        (history / name).write_text(json.dumps(run))

    earlier("a.json", 1)
    earlier("b.json", 2)
    earlier("c.json", 3, processes=1)  # its floors are one process's: not the spread between runs
    earlier("d.json", 4, cpu="Another CPU")
    few = run_offloadbench("compare", multi, multi, "--history", history)
    assert few.returncode == 2, few.stdout
    assert (
        "--history needs at least 3" in few.stderr
        and "c.json: repetitions from one process" in few.stderr
    )
    earlier("e.json", 5)
    out = tmp_path / "c.json"
    done = run_offloadbench(
        "compare", multi, multi, "--verbose", "--history", history, "--json", out
    )
    assert done.returncode == 0, done.stderr
    assert load_json(out)["run_pair_noise"]["history_runs"] == 3
    # Two benchmarks are too few for the floors' test (it learns its scale from ten or more), and the
    # summary says the history went unused rather than leaving it to be assumed.
    assert "--history not used" in done.stdout
