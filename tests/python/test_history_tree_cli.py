"""`offloadbench history TREE` over a tree of machines as the nightly workflow keeps it
(TREE/<fingerprint id>/<UTC>-<sha>.json): a table per machine, and a step that appeared at one commit
on several machines named once. The nights are a real CPU run's rows, every night scaled by 1% noise,
one benchmark made 20% slower from the seventh night on three of the four machines."""

import json
import random

import pytest

from conftest import ROOT, load_json

TEMPLATE = ROOT / "tests" / "data" / "quick_cpu_reps10.json"
STEPPED = "transfer/host_memcpy/pretouched/threads:1/16MiB/real_time"
NIGHTS, STEP_NIGHT = 12, 6


def write_tree(root):
    template = json.loads(TEMPLATE.read_text())
    assert any(r["name"] == STEPPED for r in template["benchmarks"])
    for machine in "abcd":
        rng = random.Random(machine)
        folder = root / f"fp-{machine}"
        folder.mkdir(parents=True)
        for night in range(NIGHTS):
            doc = json.loads(json.dumps(template))
            ob = doc["context"]["offloadbench"]
            ob.update(
                git_sha=f"{night:02d}aaaaaaaaaa",
                start_time_utc=f"2026-11-{night + 1:02d}T02:17:00Z",
            )
            doc["context"]["host"]["hostname"] = f"host-{machine}"
            doc["context"]["machine_fingerprint"]["id"] = f"fp-{machine}"
            scale = {}
            for row in doc["benchmarks"]:
                factor = scale.setdefault(row["name"], 1 + rng.gauss(0, 0.01))
                if row["name"] == STEPPED and machine != "d" and night >= STEP_NIGHT:
                    factor *= 1.2
                for key in ("real_time", "cpu_time"):
                    if isinstance(row.get(key), (int, float)):
                        row[key] *= factor
            (folder / f"2026-11-{night + 1:02d}-{night:02d}aaaaaaaaaa.json").write_text(
                json.dumps(doc)
            )


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("history") / "history"
    write_tree(root)
    return root


def test_a_tree_gives_a_table_per_machine_and_names_a_shared_step_once(
    run_offloadbench, tree, tmp_path
):
    out = tmp_path / "tree.json"
    result = run_offloadbench("history", tree, "--json", out)
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert text.startswith(f"history of {tree}: 4 machines, metric real_time"), text
    shared = f"SLOWER {STEPPED} appeared in 06aaaaaaaaaa (after 05aaaaaaaaaa) on 3 of 4 machines (fp-a, fp-b, fp-c)"
    assert shared in text, text
    assert text.count("appeared in") == 1, text  # named once, not once per machine
    for machine in "abcd":
        assert (
            f"machine fp-{machine} (host-{machine} · AMD EPYC · no GPU): {NIGHTS} runs" in text
        ), text
    assert text.count("in 06aaaaaaaaaa, on 3 machines (above)") == 3, text

    doc = load_json(out)
    assert [m["machine"] for m in doc["machines"]] == ["fp-a", "fp-b", "fp-c", "fp-d"]
    for m in doc[
        "machines"
    ]:  # each machine's entry is what `history` writes for its folder, plus its name
        assert {
            "runs",
            "benchmarks",
            "directory",
            "metric",
            "ignored",
            "label",
            "machine_fingerprint",
        } <= set(m)
        assert len(m["runs"]) == NIGHTS
    (step,) = doc["shared_change_points"]
    assert (
        step["benchmark"] == STEPPED
        and step["verdict"] == "SLOWER"
        and step["git_sha"] == "06aaaaaaaaaa"
    )
    assert step["machines"] == ["fp-a", "fp-b", "fp-c"] and step["machines_measured"] == 4
    assert 0.15 < step["smallest_change"] <= step["largest_change"] < 0.25


def test_one_machine_folder_reads_as_before(run_offloadbench, tree, tmp_path):
    out = tmp_path / "one.json"
    result = run_offloadbench("history", tree / "fp-a", "--json", out)
    assert result.returncode == 0, result.stderr
    assert "machines" not in load_json(out) and "appeared in" not in result.stdout
    assert "SLOWER +" in result.stdout and STEPPED in result.stdout


def test_json_over_an_input_inside_the_tree_is_refused(run_offloadbench, tree):
    victim = next((tree / "fp-b").glob("*.json"))
    result = run_offloadbench("history", tree, "--json", victim)
    assert result.returncode == 2 and "is the same file as input" in result.stderr, result.stderr
