"""offloadbench installed as a tool (docs/install.md), from the build folder the tests use: `cmake --install`
into a temporary prefix gives a program that lists, runs and plots from another folder with its own
copy of the plots package; `cpack -G DEB` gives a package that holds those files and declares the
Debian packages of every library the program links."""

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT, load_json

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
    "--out",
    "quick.json",
    "--",
    "--benchmark_min_time=0.001",
]


def cache_entry(build, name):
    """A value from the build folder's CMakeCache.txt (NAME:TYPE=value), or None."""
    for line in (build / "CMakeCache.txt").read_text().splitlines():
        if line.startswith(f"{name}:"):
            return line.split("=", 1)[1]
    return None


@pytest.fixture(scope="module")
def build(offloadbench_bin):
    folder = pathlib.Path(
        offloadbench_bin
    ).parent  # the program is built at the top of its build folder
    if not (folder / "CMakeCache.txt").exists():
        pytest.skip(f"{offloadbench_bin} is not in a CMake build folder")
    return folder


@pytest.fixture(scope="module")
def prefix(build, tmp_path_factory):
    prefix = tmp_path_factory.mktemp("prefix")
    cmake = cache_entry(build, "CMAKE_COMMAND")
    done = subprocess.run(
        [cmake, "--install", build, "--prefix", prefix], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    yield prefix
    shutil.rmtree(prefix)  # a program of tens of MB: not kept with pytest's last runs


@pytest.fixture
def elsewhere(tmp_path):
    """A folder outside the checkout with a python3 on PATH that has matplotlib (this test's Python) and
    notes the module path it was given, and no OFFLOADBENCH_PYTHON: what a user's shell has."""
    folder = tmp_path / "elsewhere"
    (folder / "bin").mkdir(parents=True)
    wrapper = folder / "bin" / "python3"
    wrapper.write_text(
        f'#!/bin/sh\necho "$PYTHONPATH" >> "{folder}/pythonpath.log"\nexec "{sys.executable}" "$@"\n'
    )
    wrapper.chmod(0o755)
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("OFFLOADBENCH_PYTHON", "PYTHONPATH", "MPLBACKEND")
    }
    env["PATH"] = f"{folder / 'bin'}:/usr/bin:/bin"
    return folder, env


def run(program, *args, cwd, env):
    return subprocess.run(
        [str(program), *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def one_line(result):
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_install_puts_each_part_under_the_gnu_folders(prefix):
    assert os.access(prefix / "bin" / "offloadbench", os.X_OK)
    home = prefix / "share" / "offloadbench"
    assert sorted(p.name for p in (home / "plots").glob("*.py")) == sorted(
        p.name for p in (ROOT / "plots").glob("*.py")
    )
    charts = sorted(
        p.relative_to(ROOT).as_posix() for p in (ROOT / "benchmarks").glob("*/*_charts.py")
    )
    assert (
        charts
        and sorted(p.relative_to(home).as_posix() for p in (home / "benchmarks").rglob("*.py"))
        == charts
    )
    assert not list(home.rglob("__pycache__")), "no byte-code from the build machine"
    assert (home / "docs" / "results.schema.json").read_bytes() == (
        ROOT / "docs" / "results.schema.json"
    ).read_bytes()
    doc = prefix / "share" / "doc" / "offloadbench"
    assert (doc / "README.md").exists() and (doc / "docs" / "install.md").exists()
    assert {p.name for p in (ROOT / "docs").iterdir()} <= {p.name for p in (doc / "docs").iterdir()}
    assert (doc / "examples" / "nightly-gpu.yml").read_bytes() == (
        ROOT / "ci" / "nightly-gpu.yml"
    ).read_bytes()


def test_installed_program_lists_runs_and_plots_from_another_folder(prefix, elsewhere):
    folder, env = elsewhere
    program = prefix / "bin" / "offloadbench"
    listing = run(program, "list", "--json", cwd=folder, env=env)
    assert listing.returncode == 0, listing.stderr
    assert any(case["fields"]["family"] == "transfer" for case in json.loads(listing.stdout))

    measured = run(program, *FAST_RUN, cwd=folder, env=env)
    assert measured.returncode == 0, measured.stderr
    rows = [
        r
        for r in load_json(folder / "quick.json")["benchmarks"]
        if r.get("device") == "cpu" and not r["skipped"]
    ]
    assert rows and all(r["real_time"] > 0 for r in rows)

    drawn = run(program, "plot", "quick.json", cwd=folder, env=env)
    assert drawn.returncode == 0, drawn.stderr
    assert (folder / "quick-plots" / "report.html").stat().st_size > 0
    assert list((folder / "quick-plots").glob("*.png"))
    # python3 from PATH drew them, from the installed package, not the checkout's.
    module_paths = (folder / "pythonpath.log").read_text().split()
    assert module_paths and all(
        p.split(":")[0] == str(prefix / "share" / "offloadbench") for p in module_paths
    )


@pytest.mark.parametrize(
    "python3, why",
    [
        ("without matplotlib", "'python3' from PATH has no matplotlib"),
        ("missing", "'python3' from PATH cannot be started"),
    ],
)
def test_installed_plot_without_matplotlib_says_what_to_install(prefix, elsewhere, python3, why):
    folder, env = elsewhere
    shutil.copy(ROOT / "tests" / "python" / "fixtures" / "cpu_only.json", folder / "cpu.json")
    if python3 == "missing":
        (folder / "bin" / "python3").unlink()
        env["PATH"] = str(folder / "bin")
    else:  # a matplotlib that cannot be imported, ahead of the real one
        (folder / "shadow").mkdir()
        (folder / "shadow" / "matplotlib.py").write_text(
            "raise ImportError('no matplotlib here')\n"
        )
        env["PYTHONPATH"] = str(folder / "shadow")
    result = run(prefix / "bin" / "offloadbench", "plot", "cpu.json", cwd=folder, env=env)
    assert result.returncode == 2, result.stderr
    line = one_line(result)
    assert why in line, line
    assert "apt install python3-matplotlib" in line and "pip install matplotlib" in line, line
    assert "scripts/setup" not in line, "an installed copy has no checkout to set up"
    assert not (folder / "cpu-plots").exists()


def test_installed_program_loads_the_libraries_the_build_linked(build, prefix):
    """The install keeps the library folders of the link (OpenBLAS's OpenMP build, the CUDA toolkit):
    both copies resolve every library to the same file."""

    def resolved(program):
        listing = subprocess.run(
            ["ldd", program], capture_output=True, text=True, check=True
        ).stdout
        return dict(re.findall(r"^\s*(\S+) => (\S+)", listing, re.MULTILINE))

    in_build = resolved(build / "offloadbench")
    installed = resolved(prefix / "bin" / "offloadbench")
    assert "not" not in installed.values(), installed
    assert installed == in_build


@pytest.fixture(scope="module")
def package(build, tmp_path_factory):
    if not shutil.which("dpkg-deb") or not shutil.which("dpkg-shlibdeps"):
        pytest.skip("dpkg-deb and dpkg-shlibdeps (dpkg-dev) are needed to build the Debian package")
    out = tmp_path_factory.mktemp("package")
    cpack = cache_entry(build, "CMAKE_CPACK_COMMAND")
    done = subprocess.run(
        [cpack, "-G", "DEB", "-B", out, "--config", build / "CPackConfig.cmake"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    debs = list(out.glob("offloadbench_*.deb"))
    assert len(debs) == 1, done.stdout
    yield debs[0]
    shutil.rmtree(out)


def package_field(deb, name):
    return subprocess.run(
        ["dpkg-deb", "-f", deb, name], capture_output=True, text=True, check=True
    ).stdout.strip()


def package_names(field):
    """'libc6 (>= 2.34), a | b' → {'libc6', 'a', 'b'}."""
    return {
        re.sub(r"\s*\(.*\)", "", alt).strip()
        for dep in field.split(",")
        for alt in dep.split("|")
        if alt.strip()
    }


def test_package_holds_the_installed_layout_under_usr(package):
    listing = subprocess.run(
        ["dpkg-deb", "-c", package], capture_output=True, text=True, check=True
    ).stdout
    paths = {line.split()[-1] for line in listing.splitlines()}
    for path in [
        "./usr/bin/offloadbench",
        "./usr/share/offloadbench/plots/__main__.py",
        "./usr/share/offloadbench/benchmarks/transfer/transfer_bandwidth_charts.py",
        "./usr/share/offloadbench/docs/results.schema.json",
        "./usr/share/doc/offloadbench/README.md",
        "./usr/share/doc/offloadbench/docs/install.md",
        "./usr/share/doc/offloadbench/examples/nightly-gpu.yml",
    ]:
        assert path in paths, f"{path} not in the package:\n{listing}"
    assert not [p for p in paths if "__pycache__" in p]
    assert (
        package.name
        == f"offloadbench_{package_field(package, 'Version')}_{package_field(package, 'Architecture')}.deb"
    )


def owning_packages(paths):
    """{path: the Debian packages holding that library file} (one dpkg -S for all), by any of its names:
    the path as found, the file it links to, and either side of a merged /usr (/lib is /usr/lib); a
    file no package holds gets an empty set."""

    def names(path):
        real = os.path.realpath(path)
        return (
            {path, real}
            | {p.removeprefix("/usr") for p in (path, real)}
            | {"/usr" + p for p in (path, real)}
        )

    query = sorted(set().union(*(names(p) for p in paths)))
    listing = subprocess.run(["dpkg-query", "-S", *query], capture_output=True, text=True).stdout
    holders = {}  # "libc6:amd64: /lib/…", or "a, b: /path" when several packages share it
    for line in listing.splitlines():
        packages, _, name = line.partition(": ")
        holders[name] = {package.split(":")[0] for package in packages.split(", ")}
    return {
        path: set().union(*(holders.get(name, set()) for name in names(path))) for path in paths
    }


def test_package_declares_the_package_of_every_library_the_program_links(build, package):
    """Every library the program names (ELF NEEDED) comes from a Debian package it Depends on, or, for the
    CUDA toolkit's, is Recommended under NVIDIA's package name; plots' Python is Recommended."""
    depends = package_names(package_field(package, "Depends"))
    recommends = package_names(package_field(package, "Recommends"))
    assert {"python3", "python3-matplotlib"} <= recommends
    program = build / "offloadbench"
    dynamic = subprocess.run(
        ["readelf", "-d", program], capture_output=True, text=True, check=True
    ).stdout
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[(.+)\]", dynamic)
    ldd = subprocess.run(["ldd", program], capture_output=True, text=True, check=True).stdout
    found = dict(re.findall(r"^\s*(\S+) => (\S+)", ldd, re.MULTILINE))
    owners = owning_packages([found[library] for library in needed])
    cuda = []
    for library in needed:
        packages = owners[found[library]]
        if not packages:
            cuda.append(library)
            continue
        assert packages & depends, f"{library} ({packages}) is not in Depends: {sorted(depends)}"
    assert all(re.match(r"lib(cudart|cublas|cublasLt)\.so\.\d+$", library) for library in cuda), (
        cuda
    )
    if cuda:
        assert {p for p in recommends if p.startswith("cuda-cudart-")} and {
            p for p in recommends if p.startswith("libcublas-")
        }, recommends
    # The OpenBLAS build the program was linked against, not only the libopenblas0 any build satisfies.
    assert owners[found["libopenblas.so.0"]] & depends


def test_unpacked_package_finds_its_plots_from_another_folder(package, elsewhere):
    """The program as the package lays it out (/usr/bin beside /usr/share/offloadbench) runs and finds its
    plots package: with a matplotlib that cannot load, that package's own check is what answers (the
    charts themselves are drawn by the installed copy above, from the same files)."""
    folder, env = elsewhere
    root = folder / "root"
    subprocess.run(["dpkg-deb", "-x", package, root], check=True)
    program = root / "usr" / "bin" / "offloadbench"
    assert run(program, "list", cwd=folder, env=env).returncode == 0
    shutil.copy(ROOT / "tests" / "python" / "fixtures" / "cpu_only.json", folder / "cpu.json")
    (folder / "shadow").mkdir()
    (folder / "shadow" / "matplotlib.py").write_text("raise ImportError('no matplotlib here')\n")
    result = run(
        program, "plot", "cpu.json", cwd=folder, env={**env, "PYTHONPATH": str(folder / "shadow")}
    )
    shutil.rmtree(root / "usr" / "bin")
    assert result.returncode == 2 and "'python3' from PATH has no matplotlib" in one_line(result), (
        result.stderr
    )
    module_path = (folder / "pythonpath.log").read_text().split()
    assert module_path == [f"{root / 'usr' / 'share' / 'offloadbench'}:{folder / 'shadow'}"]


def test_apt_can_install_the_package(package):
    """`apt install ./offloadbench_*.deb` would succeed here: every Depends is installed or installable
    (simulated; the CUDA packages, Recommended, are only installed where NVIDIA's repository is set up)."""
    if not shutil.which("apt-get"):
        pytest.skip("apt-get is not here")
    simulated = subprocess.run(
        ["apt-get", "install", "--simulate", "--no-install-recommends", f"./{package.name}"],
        cwd=package.parent,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert simulated.returncode == 0, simulated.stdout + simulated.stderr
    assert re.search(r"^Inst offloadbench ", simulated.stdout, re.MULTILINE), simulated.stdout
