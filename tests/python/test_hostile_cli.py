"""Issue 17's reproductions at the command line: each gives one line on stderr and exit 2 (or the
documented code), and nothing is replaced or left behind. The library-level halves are in
tests/test_hostile_inputs.cpp; lab/tools/hostile-inputs tries several hundred more."""

import contextlib
import fcntl
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import ROOT, load_json

sys.path.insert(0, str(ROOT))
from plots import results as py_results  # noqa: E402

GOOD = ROOT / "tests" / "data" / "quick_cpu_reps10.json"
FAST_RUN = [
    "run",
    "--suite",
    "transfer",
    "--device",
    "cpu",
    "--sizes",
    "4KiB",
    "--repetitions",
    "1",
]


def one_line_exit_2(result):
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2, result.stderr
    assert len(lines) == 1, result.stderr
    return lines[0]


def good_copy(tmp_path, name="good.json"):
    path = tmp_path / name
    path.write_text(GOOD.read_text())
    return path


# 1. Output paths: never renamed over a FIFO or a symbolic link (nor a device node: see the C++ test).
@pytest.mark.parametrize("writer", ["run", "compare-json", "compare-markdown", "history-json"])
@pytest.mark.parametrize("kind", ["fifo", "symlink"])
def test_output_path_that_is_not_a_regular_file_is_left_alone(
    run_offloadbench, tmp_path, writer, kind
):
    good = good_copy(tmp_path)
    target = tmp_path / "target"
    if kind == "fifo":
        os.mkfifo(target)
    else:
        target.symlink_to(good)
    history = tmp_path / "hist"
    history.mkdir()
    for i in range(3):
        good_copy(history, f"r{i}.json")
    args = {
        "run": FAST_RUN + ["--out", target],
        "compare-json": ["compare", good, good, "--json", target],
        "compare-markdown": ["compare", good, good, "--markdown", target],
        "history-json": ["history", history, "--json", target],
    }[writer]
    before = sorted(os.listdir(tmp_path))
    assert str(target) in one_line_exit_2(run_offloadbench(*args, cwd=tmp_path, timeout=60))
    assert target.is_fifo() if kind == "fifo" else target.is_symlink()
    assert sorted(os.listdir(tmp_path)) == before, "nothing left behind"


# 2. Sizes whose byte products wrapped (a heap overflow in the compute runner).
def test_size_that_would_wrap_is_refused_at_parse_time(run_offloadbench, tmp_path):
    line = one_line_exit_2(
        run_offloadbench(
            "run",
            "--suite",
            "compute",
            "--device",
            "cpu",
            "--sizes",
            "4611686018427387904",
            "--out",
            tmp_path / "r.json",
        )
    )
    assert "too large" in line
    assert not os.listdir(tmp_path)


# 3 and 6. Deep nesting and wrong field types: one line naming file, row and field; nothing written.
@pytest.mark.parametrize("command", ["analyze", "summary", "plot"])
def test_deep_nesting_and_wrong_types_are_refused_before_anything_is_written(
    run_offloadbench, tmp_path, command
):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 20000 + "]" * 20000)
    assert "nested deeper" in one_line_exit_2(run_offloadbench(command, deep))
    doc = json.loads(GOOD.read_text())
    doc["benchmarks"][3]["bytes"] = "many"
    typed = tmp_path / "typed.json"
    typed.write_text(json.dumps(doc))
    before = typed.read_bytes()
    line = one_line_exit_2(run_offloadbench(command, typed))
    assert str(typed) in line and "benchmarks[3]" in line and doc["benchmarks"][3]["name"] in line
    assert ".bytes is a string" in line
    assert typed.read_bytes() == before and sorted(os.listdir(tmp_path)) == [
        "deep.json",
        "typed.json",
    ]


@contextlib.contextmanager
def long_run(offloadbench_bin, out, min_time="0.05"):
    """`run` of the full transfer suite into `out`, handed over once its first benchmark is on disk;
    killed on the way out if the test left it running."""
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
            "2",
            "--out",
            str(out),
            "--",
            f"--benchmark_min_time={min_time}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.time() + 60
        while not out.exists() and time.time() < deadline:
            time.sleep(0.02)
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


# 4. Ctrl-C: what finished is on disk, the reason is recorded, the exit code says so; no lock left.
@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupt_records_why_and_exits_128_plus_signal(offloadbench_bin, tmp_path, sig, code):
    out = tmp_path / "r.json"
    with long_run(offloadbench_bin, out) as proc:
        proc.send_signal(sig)
        assert proc.wait(timeout=30) == code
    ob = load_json(out)["context"]["offloadbench"]
    assert ob["incomplete"] is True and ob["stopped_because"] == "interrupted"
    assert os.listdir(tmp_path) == ["r.json"], "no lock or temporary file is left"


# 5. Two runs writing one file: the second is refused while the first holds it.
def test_second_writer_of_the_same_out_is_refused(run_offloadbench, tmp_path):
    out = tmp_path / "r.json"
    out.write_text("previous")
    with open(f"{out}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # what a running offloadbench holds
        assert "another offloadbench run is writing" in one_line_exit_2(
            run_offloadbench(*FAST_RUN, "--out", out)
        )
    assert out.read_text() == "previous"


# 7. Google Benchmark flags that ran nothing with exit 0, or printed GB's usage with exit 0.
@pytest.mark.parametrize(
    "flag",
    [
        "--benchmark_repetitions=0",
        "--benchmark_format=xml",
        "--benchmark_out=/no/dir/x",
        "--benchmark_list_tests=true",
        "--benchmark_min_time=x",
    ],
)
def test_google_benchmark_flags_that_break_the_file_are_refused(run_offloadbench, tmp_path, flag):
    one_line_exit_2(run_offloadbench(*FAST_RUN, "--out", tmp_path / "r.json", "--", flag))
    assert not os.listdir(tmp_path)


# 8. Inputs: a FIFO hung, /dev/zero grew until bad_alloc, a folder read as "empty file".
@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "folder"])
def test_input_that_is_not_a_regular_file_is_refused_at_once(run_offloadbench, tmp_path, kind):
    path = tmp_path / "in.json"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    else:
        path = "/dev/zero"
    started = time.time()
    line = one_line_exit_2(run_offloadbench("summary", path, timeout=20))
    assert time.time() - started < 10
    assert ("is a directory" if kind == "folder" else "not a regular file") in line


# 9. The Python reader applies the C++ loader's rule to the same inputs.
def _variants():
    good = GOOD.read_text()
    doc = json.loads(good)
    yield "good", good
    yield "bom", "\ufeff" + good
    yield "huge_number", good.replace('"real_time": 7.546312400017996', '"real_time": 1e999', 1)
    yield "nan", good.replace('"real_time": 7.546312400017996', '"real_time": NaN', 1)
    for key, value in [
        ("schema_version", 4294967297),
        ("schema_version", True),
        ("schema_version", 1.0),
    ]:
        d = json.loads(good)
        d["context"]["offloadbench"][key] = value
        yield f"{key}={value!r}", json.dumps(d)
    for key, value in [
        ("bytes", "many"),
        ("skipped", "no"),
        ("real_time", "fast"),
        ("validated", 1),
        ("iterations", -1),
        ("device", {}),
        ("bytes", True),
        ("cpu_threads", 2.5),
    ]:
        d = json.loads(good)
        d["benchmarks"][0][key] = value
        yield f"{key}={value!r}", json.dumps(d)
    yield "deep", "[" * 100 + "]" * 100
    # Issue 54: the context and analysis typed, and rows of one name that cannot be pooled.
    for tag, change in [
        ("memory_string", lambda d: d["context"]["host"].update(memory_total_bytes="lots")),
        ("headline_number", lambda d: d.update(analysis={"headlines": [1]})),
        ("unit_differs", lambda d: d["benchmarks"][20].update(time_unit="ns")),
        ("threads_differ", lambda d: d["benchmarks"][20].update(threads=2)),
        ("no_time_unit", lambda d: d["benchmarks"][0].pop("time_unit")),
        ("negative_time", lambda d: d["benchmarks"][0].update(real_time=-1.0)),
    ]:
        d = json.loads(good)
        change(d)
        yield tag, json.dumps(d)
    doc["benchmarks"][0] = "row"
    yield "row_string", json.dumps(doc)


@pytest.mark.parametrize("name, text", list(_variants()), ids=[n for n, _ in _variants()])
def test_python_and_cpp_readers_agree(run_offloadbench, tmp_path, name, text):
    path = tmp_path / "in.json"
    path.write_text(text)
    cpp = run_offloadbench("summary", path)
    try:
        py_results.load(path)
        python_accepts = True
    except py_results.ResultsError:
        python_accepts = False
    assert (cpp.returncode == 0) == python_accepts, f"C++: {cpp.returncode} {cpp.stderr.strip()}"
    if not python_accepts:
        one_line_exit_2(cpp)


# 10. The small ones.
@pytest.mark.parametrize(
    "args, message",
    [
        (["run", "--device", "cpu", "--sizes", ""], "--sizes"),
        (["run", "--device", ""], "--device ''"),
    ],
)
def test_empty_values_are_not_defaults(run_offloadbench, tmp_path, args, message):
    assert message in one_line_exit_2(
        run_offloadbench(*args, "--out", tmp_path / "r.json", cwd=tmp_path)
    )
    assert not os.listdir(tmp_path)


def test_rejected_run_makes_no_results_folder(run_offloadbench, tmp_path):
    one_line_exit_2(run_offloadbench("run", "--suite", "nope", cwd=tmp_path))
    one_line_exit_2(
        run_offloadbench(
            "run", "--device", "cpu", "--", "--benchmark_filter=^nothing$", cwd=tmp_path
        )
    )
    assert not os.listdir(tmp_path)


def test_compare_bad_markdown_path_is_bad_input_not_slower(run_offloadbench, tmp_path):
    good = good_copy(tmp_path)
    assert "/no/dir/x.md" in one_line_exit_2(
        run_offloadbench("compare", good, good, "--markdown", "/no/dir/x.md")
    )


def test_compare_with_no_benchmark_in_common_is_bad_input(run_offloadbench, tmp_path):
    good = good_copy(tmp_path)
    doc = json.loads(GOOD.read_text())
    for row in doc["benchmarks"]:
        row["name"] = row["run_name"] = "other/" + row["name"]
    other = tmp_path / "other.json"
    other.write_text(json.dumps(doc))
    assert "no benchmark in common" in one_line_exit_2(run_offloadbench("compare", good, other))


def test_plot_without_matplotlib_leaves_nothing(run_offloadbench, tmp_path):
    good = good_copy(tmp_path)
    before = good.read_bytes()
    env = {**os.environ, "OFFLOADBENCH_PYTHON": sys.executable}
    probe = subprocess.run([sys.executable, "-c", "import matplotlib"], capture_output=True)
    if probe.returncode == 0:  # this Python has matplotlib: use one that cannot import it
        env["PYTHONPATH"] = str(tmp_path / "shadow")
        (tmp_path / "shadow").mkdir()
        (tmp_path / "shadow" / "matplotlib.py").write_text(
            "raise ImportError('no matplotlib here')\n"
        )
    assert "matplotlib" in one_line_exit_2(run_offloadbench("plot", good, env=env))
    assert good.read_bytes() == before
    assert not (tmp_path / "good-plots").exists()


# Issue 38, 2. An output that is an input, by its path or through a link, would destroy it: refused.
@pytest.mark.parametrize("via", ["same path", "hard link", "linked input"])
def test_export_to_its_own_input_is_refused(run_offloadbench, tmp_path, via):
    good = good_copy(tmp_path)
    before = good.read_bytes()
    given, out = good, good
    if via == "hard link":
        out = tmp_path / "hard.json"
        os.link(good, out)
    elif via == "linked input":
        given = tmp_path / "link.json"
        given.symlink_to(good)
    line = one_line_exit_2(run_offloadbench("export", "--format", "bencher", given, "--out", out))
    assert "is the same file as FILE" in line
    assert good.read_bytes() == before


@pytest.mark.parametrize("via", ["same path", "hard link"])
def test_history_json_over_one_of_its_inputs_is_refused(run_offloadbench, tmp_path, via):
    history = tmp_path / "hist"
    history.mkdir()
    for i in range(3):
        good_copy(history, f"r{i}.json")
    victim = history / "r1.json"
    before = victim.read_bytes()
    out = victim if via == "same path" else tmp_path / "hard.json"
    if via == "hard link":
        os.link(victim, out)
    assert "is the same file as input" in one_line_exit_2(
        run_offloadbench("history", history, "--json", out)
    )
    assert victim.read_bytes() == before


# Issue 38, 4. analyze rewrote a file that a running `run` was still writing, putting back a stale
# snapshot over the rows finished since: while the run holds the lock, analyze is refused.
def test_analyze_is_refused_while_a_run_holds_the_file(run_offloadbench, tmp_path):
    good = good_copy(tmp_path)
    before = good.read_bytes()
    with open(f"{good}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # what a running offloadbench holds
        assert "another offloadbench run is writing" in one_line_exit_2(
            run_offloadbench("analyze", good)
        )
    assert good.read_bytes() == before
    done = run_offloadbench(
        "analyze", good
    )  # once the run is gone, analyze takes the lock and goes ahead
    assert done.returncode == 0, done.stderr
    assert "analysis" in load_json(good)
    assert os.listdir(tmp_path) == ["good.json"], "the lock goes with analyze"


# Issue 38, 12. stdout is block-buffered when redirected: on a full device every print "succeeded"
# and the results were lost with exit 0. Short outputs fail at the final flush, long ones (compare,
# list) while printing; both are exit 1 with one line naming standard output.
@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize(
    "args",
    [
        ["export", "--format", "github-action-benchmark", "GOOD"],
        ["summary", "GOOD"],
        ["info", "--json"],
        ["compare", "GOOD", "GOOD"],
        ["history", "DIR"],
        ["list"],
    ],
    ids=["export", "summary", "info", "compare", "history", "list"],
)
def test_a_full_stdout_is_an_error(offloadbench_bin, tmp_path, args):
    history = tmp_path / "hist"
    history.mkdir()
    for i in range(3):
        good_copy(history, f"r{i}.json")
    argv = [offloadbench_bin] + [{"GOOD": str(GOOD), "DIR": str(history)}.get(a, a) for a in args]
    with open("/dev/full", "w") as full:
        done = subprocess.run(argv, stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("offloadbench:")]
    assert errors == [
        "offloadbench: error: could not write to standard output: No space left on device"
    ], done.stderr


# Issue 38, 13. Names, skip reasons, headlines and git SHAs come from files anyone can write: raw, a CR
# and ESC [2K erase the line they are on and BEL rings, so a name could forge a verdict in a CI log.
HOSTILE = "\r\x1b[2K\x07SLOWER\x7f\u009b|x"
HOSTILE_SHOWN = "\\r\\x1b[2K\\x07SLOWER\\x7f\\u009b|x"


def hostile_results(path, slower=1.0, git_sha="e28dcc65bb00"):
    """GOOD with HOSTILE in its first benchmark's name and headline, the second benchmark skipped for a
    HOSTILE reason, a HOSTILE finding and `git_sha`; the first benchmark's times about 5 µs × `slower`."""
    doc = json.loads(GOOD.read_text())
    names = list(
        dict.fromkeys(row["name"] for row in doc["benchmarks"] if row["run_type"] == "iteration")
    )
    for row in doc["benchmarks"]:
        if row["name"] == names[0]:
            row["name"] = row["run_name"] = names[0] + HOSTILE
            row["headline"] = HOSTILE
            row["real_time"] = (
                5 + 0.01 * row["repetition_index"]
            ) * slower  # little spread: a clear verdict
        elif row["name"] == names[1]:
            row.update(skipped=True, skip_reason=HOSTILE)
    doc["analysis"] = {
        "headlines": [HOSTILE],
        "invariants": {  # a self-check's row name and reason too
            "rules": [],
            "violations": [
                {
                    "invariant": "steady",
                    "name": HOSTILE,
                    "repetition_index": None,
                    "reason": HOSTILE,
                }
            ],
        },
    }
    doc["context"]["offloadbench"]["git_sha"] = git_sha
    path.write_text(json.dumps(doc))
    return path


def assert_no_raw_controls(data, allow_del_and_c1=False):
    text = data.decode("utf-8")  # strict: a byte that is not UTF-8 fails here
    bad = {
        c
        for c in text
        if (ord(c) < 0x20 and c != "\n") or (0x7F <= ord(c) <= 0x9F and not allow_del_and_c1)
    }
    assert not bad, f"raw control characters {sorted(map(hex, map(ord, bad)))} in {text[:2000]!r}"


def test_compare_prints_names_and_reasons_from_files_escaped(offloadbench_bin, tmp_path):
    base = hostile_results(tmp_path / "base.json")
    new = hostile_results(tmp_path / "new.json", slower=2.0)
    doc = json.loads(new.read_text())  # NEW also skips the third benchmark for a HOSTILE reason
    third = list(
        dict.fromkeys(row["name"] for row in doc["benchmarks"] if row["run_type"] == "iteration")
    )[2]
    for row in doc["benchmarks"]:
        if row["name"] == third:
            row.update(skipped=True, skip_reason=HOSTILE)
    new.write_text(json.dumps(doc))
    md = tmp_path / "c.md"
    done = subprocess.run(
        [offloadbench_bin, "compare", base, new, "--verbose", "--markdown", md],
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr  # the first benchmark is twice as slow: a real SLOWER
    assert_no_raw_controls(done.stdout + done.stderr)
    lines = done.stdout.decode().splitlines()
    # A long name may take a line of its own below its verdict row.
    assert any(line.startswith("SLOWER") for line in lines)
    assert any(line.count(HOSTILE_SHOWN) == 1 for line in lines)
    assert any("not measured in NEW" in line and line.count(HOSTILE_SHOWN) == 1 for line in lines)
    table = md.read_bytes()
    assert_no_raw_controls(table)
    rows = [line for line in table.decode().splitlines() if line.startswith("| ")]
    assert rows and all(line.replace("\\|", "").count("|") == 10 for line in rows), (
        "a '|' in a name adds no column"
    )


def test_summary_and_analyze_print_labels_reasons_and_findings_escaped(offloadbench_bin, tmp_path):
    path = hostile_results(tmp_path / "r.json")
    # summary analyses the file again in memory (the stored findings are analyze's to print, below)
    done = subprocess.run(
        [offloadbench_bin, "summary", "--all", path], capture_output=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert_no_raw_controls(done.stdout + done.stderr)
    out = done.stdout.decode()
    assert (
        f"  {HOSTILE_SHOWN} " in out and f": {HOSTILE_SHOWN}\n" in out
    )  # the headline label and the skip reason
    doc = json.loads(path.read_text())
    del doc[
        "analysis"
    ]  # analyze writes findings of its own, and one quotes the file's reason for no GPU
    doc["context"]["cuda"]["unavailable_reason"] = HOSTILE
    path.write_text(json.dumps(doc))
    done = subprocess.run([offloadbench_bin, "analyze", path], capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert_no_raw_controls(done.stdout + done.stderr)
    assert f"  no GPU measurements: {HOSTILE_SHOWN}\n" in done.stdout.decode()


def test_history_prints_names_shas_and_file_names_escaped(offloadbench_bin, tmp_path):
    history = tmp_path / "hist\x1b[8m"
    history.mkdir()
    for i in range(10):  # five nights on each side of a doubling: a change point by any test
        night = hostile_results(
            history / f"r{i}.json", slower=2.0 if i >= 5 else 1.0, git_sha=f"sha{i}{HOSTILE}"
        )
        doc = json.loads(night.read_text())
        doc["context"]["offloadbench"]["start_time_utc"] = f"2026-11-{i + 1:02d}T00:00:00Z"
        night.write_text(json.dumps(doc))
    unfinished = hostile_results(history / f"x{HOSTILE}.json")
    doc = json.loads(unfinished.read_text())
    doc["context"]["offloadbench"]["incomplete"] = True
    unfinished.write_text(json.dumps(doc))
    done = subprocess.run(
        [offloadbench_bin, "history", history, "--all"], capture_output=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert_no_raw_controls(done.stdout + done.stderr)
    out = done.stdout.decode()
    assert (
        f"SLOWER +100.0% at 2026-11-06T00:00:00Z (git sha5{HOSTILE_SHOWN}, after sha4{HOSTILE_SHOWN})"
        in out
    )
    assert f"x{HOSTILE_SHOWN}.json: unfinished run" in out and "hist\\x1b[8m" in out


def test_export_and_error_messages_quote_names_escaped(offloadbench_bin, tmp_path):
    path = hostile_results(tmp_path / "r.json")
    done = subprocess.run(
        [offloadbench_bin, "export", "--format", "bencher", path], capture_output=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert_no_raw_controls(done.stdout + done.stderr)  # JSON in ASCII: C1 and DEL escaped too
    assert done.stdout.isascii()
    assert any(name.endswith(HOSTILE) for name in json.loads(done.stdout))
    doc = json.loads(path.read_text())
    doc["benchmarks"][0]["bytes"] = "many"  # the error message quotes the row's name
    path.write_text(json.dumps(doc))
    done = subprocess.run([offloadbench_bin, "summary", path], capture_output=True, timeout=120)
    assert done.returncode == 2
    assert_no_raw_controls(done.stderr)
    assert len(done.stderr.decode().splitlines()) == 1 and HOSTILE_SHOWN in done.stderr.decode()


# Reliability, second round. 7: OMP_NUM_THREADS=100000 crashed libgomp (SIGSEGV) and left the lock.
def test_a_thread_count_the_machine_cannot_run_is_bad_input(run_offloadbench, tmp_path):
    out = tmp_path / "r.json"
    env = dict(os.environ, OMP_NUM_THREADS="100000")
    line = one_line_exit_2(run_offloadbench(*FAST_RUN, "--out", out, env=env))
    assert "OMP_NUM_THREADS='100000' asks for" in line and "hardware threads" in line
    assert os.listdir(tmp_path) == []


# 16: the default results folder that cannot be made was exit 1 "filesystem error"; it is bad input.
def test_a_default_results_folder_that_cannot_be_made_is_bad_input(run_offloadbench, tmp_path):
    (tmp_path / "results").write_text("a file where the folder should be")
    line = one_line_exit_2(run_offloadbench(*FAST_RUN, cwd=tmp_path))
    assert "default results folder 'results'" in line
    assert (tmp_path / "results").read_text() == "a file where the folder should be"


# 16: once measuring began, an output that stopped being writable is exit 1 (it was 2, "bad input").
def test_an_out_folder_deleted_during_the_run_is_exit_1(offloadbench_bin, tmp_path):
    folder = tmp_path / "out"
    folder.mkdir()
    out = folder / "r.json"
    with long_run(offloadbench_bin, out, min_time="0.02") as proc:
        subprocess.run(["rm", "-rf", str(folder)], check=True)
        _, stderr = proc.communicate(timeout=120)
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert proc.returncode == 1, stderr
    assert len(lines) == 1 and str(folder) in lines[0], stderr


def small_tmpfs(path, size="4m"):
    """A tmpfs of `size` at `path`, or a skip where this machine does not allow mounting one."""
    path.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs to fill needs root")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")


def fill(folder):
    try:
        with open(folder / "filler", "wb") as f:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
    except OSError:  # full, possibly before the filler could be made
        pass


# 6: SIGTERM while the disk was full aborted the program (134) from its signal thread, lock left.
def test_sigterm_on_a_full_disk_exits_143_with_the_last_good_file(offloadbench_bin, tmp_path):
    small = tmp_path / "small"
    small_tmpfs(small)
    try:
        out = small / "r.json"
        with long_run(offloadbench_bin, out) as proc:
            fill(small)
            proc.send_signal(signal.SIGTERM)
            _, stderr = proc.communicate(timeout=60)
        assert proc.returncode == 143, stderr
        assert (
            "interrupted (SIGTERM)" in stderr and "keeps the benchmarks written before" in stderr
        ), stderr
        assert set(os.listdir(small)) <= {"filler", "r.json"}, "no lock or temporary file is left"
        assert load_json(out)["benchmarks"], "the last complete write is intact"
    finally:
        subprocess.run(["umount", str(small)], capture_output=True)


# 11: a writer killed during its atomic write left r.json.tmp.XXXXXX; the next writer removes it.
def test_analyze_removes_the_temporary_a_killed_writer_left(run_offloadbench, tmp_path):
    results = good_copy(tmp_path, "r.json")
    (tmp_path / "r.json.tmp.Ab12Cd").write_text("half of a results file")
    assert run_offloadbench("analyze", results).returncode == 0
    assert sorted(os.listdir(tmp_path)) == ["r.json"]


# 2 (compare): --json or --markdown naming one of the inputs, or each other, destroyed it (exit 0).
@pytest.mark.parametrize(
    "outputs, message",
    [
        (["--json", "{base}"], "--json '{base}' is the same file as BASE"),
        (["--markdown", "{new}"], "--markdown '{new}' is the same file as NEW"),
        (
            ["--json", "{dir}/o.md", "--markdown", "{dir}/o.md"],
            "--json '{dir}/o.md' is the same file as --markdown",
        ),
    ],
)
def test_compare_outputs_that_are_inputs_or_each_other_are_refused(
    run_offloadbench, tmp_path, outputs, message
):
    base, new = good_copy(tmp_path, "base.json"), good_copy(tmp_path, "new.json")
    fill = lambda text: text.format(base=base, new=new, dir=tmp_path)
    before = sorted(os.listdir(tmp_path)), base.read_bytes(), new.read_bytes()
    line = one_line_exit_2(run_offloadbench("compare", base, new, *map(fill, outputs)))
    assert fill(message) in line
    assert (sorted(os.listdir(tmp_path)), base.read_bytes(), new.read_bytes()) == before


# 17: 200,000 rows took compare 9.8 s and 2.6 GB, a 0.96 GiB input summary 29 s and 5.3 GB. Inputs
# are capped where the heaviest command stays within about 10 s and 2 GiB: 128 MiB.
@pytest.mark.parametrize("command", [["summary"], ["analyze"], ["plot"]])
def test_an_input_above_128_mib_is_refused_at_once(run_offloadbench, tmp_path, command):
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate((128 << 20) + 1)  # sparse: nothing is written
    started = time.time()
    line = one_line_exit_2(run_offloadbench(*command, big, timeout=60))
    assert "big.json" in line and (
        "134217728" in line or "128 MiB" in line or "too large" in line
    ), line
    assert time.time() - started < 10
    assert sorted(os.listdir(tmp_path)) == ["big.json"]
