"""Shared pytest fixtures: where the built offloadbench is, and a results-file loader."""

import json
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "serial: times something, so runs alone in its xdist group (see scripts/test)"
    )


def pytest_collection_modifyitems(items):
    # scripts/test runs pytest -n N --dist loadgroup: the tests of one xdist_group run one after another on
    # one worker, so a test marked serial never runs beside another serial one.
    for item in items:
        if item.get_closest_marker("serial"):
            item.add_marker(pytest.mark.xdist_group("serial"))


@pytest.fixture(scope="session")
def offloadbench_bin():
    path = pathlib.Path(
        os.environ.get("OFFLOADBENCH_BIN", ROOT / "build" / "test" / "offloadbench")
    )
    if not path.exists():
        pytest.skip(f"{path} is not built (run scripts/test)")
    return str(path.resolve())


@pytest.fixture
def run_offloadbench(offloadbench_bin):
    """Runs the CLI and returns the CompletedProcess (text mode, never raises on exit codes)."""

    def run(*args, timeout=600, **kwargs):
        return subprocess.run(
            [offloadbench_bin, *map(str, args)],
            capture_output=True,
            text=True,
            timeout=timeout,
            **kwargs,
        )

    return run


def load_json(path):
    with open(path) as f:
        return json.load(f)


@pytest.fixture(scope="session")
def nightly_site(tmp_path_factory, offloadbench_bin):
    """A nightly results tree of 3 machines x 30 nights with injected steps (nightly_fixture.py) and the site
    `offloadbench dashboard` built from it, once per session: tree, site, machines (what was injected), done."""
    import types

    import nightly_fixture

    root = tmp_path_factory.mktemp("nightly")
    machines = nightly_fixture.write_tree(root / "tree")
    done = subprocess.run(
        [offloadbench_bin, "dashboard", str(root / "tree"), "--out", str(root / "site")],
        capture_output=True,
        text=True,
        timeout=600,
    )
    return types.SimpleNamespace(
        tree=root / "tree", site=root / "site", machines=machines, done=done
    )
