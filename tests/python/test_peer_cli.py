"""The peer suite and NUMA options from the command line, on any machine: the listing with
nvbandwidth's names, every peer case skipped once with its reason below two GPUs, the GPU x GPU
matrix in `summary` and the heatmaps from a SYNTHETIC 4-GPU results file (tests/data/
make_peer_fixture.py: made-up figures), and bad --host-numa / --device values."""

import json
import sys

import pytest

from conftest import ROOT, load_json

sys.path.insert(0, str(ROOT))

FIXTURE = ROOT / "tests" / "data" / "peer_4gpu_synthetic.json"


def test_list_shows_every_peer_case_beside_its_nvbandwidth_name(run_offloadbench):
    result = run_offloadbench("list", "--suite", "peer", "--names", "nvbandwidth")
    assert result.returncode == 0, result.stderr
    lines = [line.split() for line in result.stdout.splitlines() if line.startswith("  peer/")]
    names = {parts[0]: parts[1] for parts in lines}
    assert names["peer/read/ce"] == "device_to_device_memcpy_read_ce"
    assert names["peer/bidirectional_write/sm"] == "device_to_device_bidirectional_memcpy_write_sm"
    assert names["peer/latency/sm"] == "device_to_device_latency_sm"
    assert names["peer/host_to_all/ce"] == "host_to_all_memcpy_ce"
    assert len(names) == 21 and len(set(names.values())) == 21


def test_list_names_the_transfer_cases_nvbandwidth_also_measures(run_offloadbench):
    result = run_offloadbench("list", "--suite", "transfer", "--names", "nvbandwidth")
    assert result.returncode == 0, result.stderr
    pairs = dict(
        line.split()[:2]
        for line in result.stdout.splitlines()
        if line.startswith("  transfer/") and len(line.split()) >= 2
    )
    assert pairs["transfer/h2d/pinned/256MiB"] == "host_to_device_memcpy_ce"
    assert pairs["transfer/latency/pointer_chase_mapped_host"] == "host_device_latency_sm"
    assert pairs["transfer/h2d/pageable/256MiB"] == "-"


def test_peer_run_below_two_gpus_skips_every_case_once_with_its_reason(run_offloadbench, tmp_path):
    out = tmp_path / "peer.json"
    result = run_offloadbench("run", "--suite", "peer", "--repetitions", "1", "--out", out)
    assert result.returncode == 0, result.stderr
    rows = [r for r in load_json(out)["benchmarks"] if r.get("run_type") == "iteration"]
    assert len(rows) == 21
    assert len({r["name"] for r in rows}) == 21
    assert all(r["skipped"] and r["skip_reason"] for r in rows)
    no_gpu = load_json(out)["context"]["cuda"]["unavailable_reason"]
    expected = no_gpu or "needs at least 2 GPUs"  # no GPU at all: that reason; one GPU: the count
    assert all(expected in r["skip_reason"] for r in rows), rows[0]["skip_reason"]


def test_summary_prints_the_gpu_by_gpu_matrix_of_the_synthetic_fixture(run_offloadbench):
    result = run_offloadbench("summary", FIXTURE, "--all")
    assert result.returncode == 0, result.stderr
    text = result.stdout
    start = text.index("device_to_device_memcpy_read_ce (GB/s")
    block = text[start:].splitlines()[1:6]
    assert block[0].split() == ["0", "1", "2", "3"]
    assert block[1].split() == ["0", "N/A", "180.00", "25.00", "N/A"]  # 0<->3 waived in the fixture
    assert block[4].split() == ["3", "N/A", "25.00", "180.00", "N/A"]
    assert "device_to_device_latency_sm (ns" in text
    one_row = text[text.index("all_to_one_write_ce (GB/s") :].splitlines()[2].split()
    assert one_row == ["205.00", "230.00", "230.00", "205.00"]


def test_heatmaps_are_drawn_from_the_synthetic_fixture(tmp_path):
    pytest.importorskip("matplotlib")
    from plots import families, results

    peer = families.module("peer_charts")
    doc = results.load(str(FIXTURE))
    drawn, missing = peer.charts(doc, tmp_path)
    assert not missing
    assert {c["png"] for c in drawn} >= {
        "peer_device_to_device_memcpy_read_ce.png",
        "peer_all_to_one_write_ce.png",
        "peer_device_to_device_latency_sm.png",
    }
    assert all((tmp_path / c["png"]).stat().st_size > 1000 for c in drawn)
    cells = {t: c for t, _, _, c in peer.matrices(doc)}
    assert cells["device_to_device_bidirectional_memcpy_read_ce"][2][3] == pytest.approx(360.0)
    assert cells["device_to_device_memcpy_read_ce"][0][3] is None


def test_no_peer_rows_is_a_missing_chart_with_the_reason(tmp_path):
    pytest.importorskip("matplotlib")
    from plots import families

    peer = families.module("peer_charts")
    doc = json.loads(FIXTURE.read_text())
    for row in doc["benchmarks"]:
        row["skipped"], row["skip_reason"] = True, "needs at least 2 GPUs"
    drawn, missing = peer.charts(doc, tmp_path)
    assert not drawn and "needs at least 2 GPUs" in missing[0]


@pytest.mark.parametrize(
    "value, message",
    [
        ("near", "--host-numa 'near' is not local, remote, all or a NUMA node number"),
        ("99", "no NUMA node 99 with memory"),
        ("-1", "is not local, remote, all"),
    ],
)
def test_bad_host_numa_is_one_line_and_exit_2(run_offloadbench, tmp_path, value, message):
    result = run_offloadbench("run", "--suite", "transfer", "--host-numa", value, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and message in lines[0], result.stderr
    assert not list(tmp_path.rglob("*.json"))


@pytest.mark.parametrize(
    "value, message", [("0,0", "names GPU 0 twice"), ("0,x", "is not a GPU index")]
)
def test_bad_device_lists_are_one_line_and_exit_2(run_offloadbench, tmp_path, value, message):
    result = run_offloadbench("run", "--suite", "peer", "--device", value, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and message in lines[0], result.stderr


def test_info_and_the_results_context_show_numa(run_offloadbench, tmp_path):
    info = json.loads(run_offloadbench("info", "--json").stdout)
    assert isinstance(info["numa"]["nodes_with_memory"], list)
    assert "libnuma" in info["numa"]
    text = run_offloadbench("info").stdout
    assert "NUMA:" in text
