"""`offloadbench dashboard`: the site built from a nightly tree of 3 machines x 30 nights (nightly_fixture.py)
shows the injected steps, and only those, on the right machines and benchmarks, and the open regressions
across machines; bad input is one line and exit 2, and a rebuild replaces the previous site whole."""

import html.parser
import json
import shutil

import pytest

import nightly_fixture
from nightly_fixture import commit


class Page(html.parser.HTMLParser):
    """A page's sections by id: the rows of their tables (cell texts, header rows left out) and their text."""

    def __init__(self, path):
        super().__init__()
        self.sections, self._open, self._row, self._cell = {}, [], None, None
        self.feed(path.read_text())
        self.close()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "section":
            self._open.append(attrs.get("id"))
            if attrs.get("id"):
                self.sections[attrs["id"]] = {"rows": [], "text": ""}
        elif tag == "tr":
            self._row = []
        elif tag == "td" and self._row is not None:
            self._cell = ""

    def handle_endtag(self, tag):
        if tag == "section":
            self._open.pop()
        elif tag == "td" and self._cell is not None:
            self._row.append(" ".join(self._cell.split()))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            if self._row:
                innermost = next(s for s in reversed(self._open) if s)
                self.sections[innermost]["rows"].append(self._row)
            self._row = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data
        for section in filter(None, self._open):
            self.sections[section]["text"] += data

    def rows(self, section):
        return self.sections[section]["rows"]

    def text(self, section):
        return " ".join(self.sections[section]["text"].split())


@pytest.fixture(scope="module")
def site(nightly_site):
    assert nightly_site.done.returncode == 0, nightly_site.done.stderr
    return nightly_site


def family_page(site, machine, benchmark):
    return site.site / machine.name / f"{benchmark.split('/')[0]}.html"


def test_one_page_per_machine_and_family_and_one_chart_per_benchmark(site):
    assert "dashboard: 3 machine(s)" in site.done.stdout, site.done.stdout
    index = Page(site.site / "index.html")
    assert [row[0] for row in index.rows("machines")] == sorted(m.name for m in site.machines)
    for machine in site.machines:
        page = Page(site.site / machine.name / "index.html")
        families = {name.split("/")[0] for name in machine.benchmarks()}
        listed = page.text("families")
        for family in families:
            assert f"{family}: " in listed
            assert (site.site / machine.name / f"{family}.html").is_file()
        charts = sorted(p.name for p in (site.site / machine.name / "charts").iterdir())
        assert len(charts) == len(machine.benchmarks())
        assert all(
            c.endswith(".svg") and (site.site / machine.name / "charts" / c).stat().st_size > 1000
            for c in charts
        )


def test_change_points_are_the_injected_steps_on_their_machines(site):
    for machine in site.machines:
        rows = Page(site.site / machine.name / "index.html").rows("change-points")
        found = {(row[0], row[1].split()[0], row[2]) for row in rows}
        injected = {(s.benchmark, s.verdict, commit(s.night)) for s in machine.steps}
        assert found == injected, machine.name
        for row, step in ((r, s) for r in rows for s in machine.steps if r[2] == commit(s.night)):
            assert row[3] == commit(step.night - 1)  # the step appeared after the night before
            change = float(row[1].split()[1].rstrip("%")) / 100
            assert change == pytest.approx(step.factor - 1, abs=0.03), row


def test_open_regressions_list_the_unrecovered_slowdowns_across_machines(site):
    rows = Page(site.site / "index.html").rows("regressions")
    found = {(row[0], row[1], row[3]) for row in rows if len(row) == 7}
    expected = {
        (m.name, bench, commit(night))
        for m in site.machines
        for bench, night in m.open_regressions()
    }
    assert (
        len(expected) == 3
    )  # one per machine: the L40S mlp step was undone, the H100 compute one is faster
    assert found == expected
    ab_slower = {(row[0], row[1]) for row in rows if len(row) == 4}
    assert ab_slower == {(m.name, name) for m in site.machines for name in (m.ab_slower or [])}


def test_machine_rows_name_gpu_driver_link_and_newest_ab(site):
    rows = {row[0]: row for row in Page(site.site / "index.html").rows("machines")}
    h100, l40s, cpu = site.machines
    assert rows[h100.name][1:4] == [
        "NVIDIA H100 80GB HBM3",
        "580.159.04",
        "PCIe Gen5 x16, 63.0 GB/s per direction",
    ]
    assert rows[l40s.name][1:4] == [
        "NVIDIA L40S",
        "570.86.15",
        "PCIe Gen4 x16, 31.5 GB/s per direction",
    ]
    assert rows[cpu.name][1:4] == ["none (CPU only)", "none", "none"]
    assert rows[h100.name][5].startswith("SLOWER (1 SLOWER")
    assert rows[l40s.name][5] == "no A/B verdict in the tree"
    assert rows[cpu.name][5].startswith("no slowdown (0 SLOWER")
    for machine, row in ((m, rows[m.name]) for m in site.machines):
        assert row[4].startswith(f"{nightly_fixture.NIGHTS} (2026-10-01 to 2026-10-30)")
        assert row[6:] == [str(len(machine.steps)), str(len(machine.open_regressions()))]
    facts = dict(Page(site.site / h100.name / "index.html").rows("machine"))
    assert facts["base (last good commit)"] == commit(h100.baseline_night)
    assert facts["newest commit"] == commit(nightly_fixture.NIGHTS - 1)
    assert (
        "cudaErrorInsufficientDriver"
        in dict(Page(site.site / cpu.name / "index.html").rows("machine"))["GPU"]
    )


def test_each_trend_shows_its_own_steps_and_only_those(site):
    for machine in site.machines:
        for name in machine.benchmarks():
            page = Page(family_page(site, machine, name))
            section = next(s for s in page.sections if page.text(s).startswith(name + " "))
            steps = [s for s in machine.steps if s.benchmark == name]
            text = page.text(section)
            chart = (site.site / machine.name / "charts" / f"{section}.svg").read_text()
            if not steps:
                assert "no change point" in text and " at " not in chart, (machine.name, name)
            for step in steps:
                assert f"{step.verdict} " in text and commit(step.night) in text
                assert f"at {commit(step.night)}" in chart  # the annotation is drawn on the step


def one_line_exit_2(done):
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    return done.stderr


def small_tree(site, tmp_path, nights=4):
    """One machine (the CPU-only one) of the session's tree, its first nights only."""
    machine = site.machines[2]
    folder = tmp_path / "tree" / "history" / machine.name
    folder.mkdir(parents=True)
    for path in sorted((site.tree / "history" / machine.name).iterdir())[:nights]:
        shutil.copy(path, folder)
    return tmp_path / "tree", folder


def test_bad_input_is_one_line_and_exit_2(site, run_offloadbench, tmp_path):
    assert "not a folder" in one_line_exit_2(
        run_offloadbench("dashboard", tmp_path / "nope", "--out", tmp_path / "s")
    )
    assert "no history/ folder" in one_line_exit_2(
        run_offloadbench("dashboard", tmp_path, "--out", tmp_path / "s")
    )
    tree, folder = small_tree(site, tmp_path)
    (tmp_path / "file").write_text("x")
    assert "not a folder" in one_line_exit_2(
        run_offloadbench("dashboard", tree, "--out", tmp_path / "file")
    )
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    assert "other files in it" in one_line_exit_2(
        run_offloadbench("dashboard", tree, "--out", foreign)
    )
    assert [p.name for p in foreign.iterdir()] == ["notes.txt"]
    ab = tree / "ab" / folder.name / "20261231T000000Z-abc.json"
    ab.parent.mkdir(parents=True)
    ab.write_text("{not json")
    assert ab.name in one_line_exit_2(run_offloadbench("dashboard", tree, "--out", tmp_path / "s"))
    assert not (tmp_path / "s").exists()


def test_a_rebuild_replaces_the_site_whole_and_a_failed_one_keeps_it(
    site, run_offloadbench, tmp_path
):
    tree, folder = small_tree(site, tmp_path)
    out = tmp_path / "site"
    assert run_offloadbench("dashboard", tree, "--out", out).returncode == 0
    (out / "stale.html").write_text("from an older build")
    done = run_offloadbench("dashboard", tree, "--out", out)
    assert done.returncode == 0, done.stderr
    assert not (out / "stale.html").exists() and (out / "index.html").is_file()
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    bad = folder / "20261231T000000Z-bad.json"
    bad.write_text(json.dumps({"context": {}, "benchmarks": "no"}))
    assert bad.name in one_line_exit_2(run_offloadbench("dashboard", tree, "--out", out))
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "site",
        "tree",
    ]  # no staging folder left behind


def test_a_python_without_matplotlib_is_named_before_anything_is_written(
    site, run_offloadbench, tmp_path
):
    tree, _ = small_tree(site, tmp_path)
    done = run_offloadbench(
        "dashboard",
        tree,
        "--out",
        tmp_path / "site",
        env={"PATH": "/usr/bin:/bin", "OFFLOADBENCH_PYTHON": "/bin/false"},
    )
    assert "OFFLOADBENCH_PYTHON" in one_line_exit_2(done)
    assert not (tmp_path / "site").exists()
