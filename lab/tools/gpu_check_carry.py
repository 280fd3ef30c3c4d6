"""A build carried from the CPU machine to the GPU machine (lab/tools/gpu-check --pack-build): it
saves the GPU machine the build on every call that finds it cold. pack_build copies what the stages
run (the executables and ctest's files) with a hash of the sources; on the GPU machine
use_carried_build accepts it only while the sources still match, after pointing ctest's absolute
paths at where the checkout and the copy now are. Same CUDA on both machines (13.0); the shared
libraries come from .devdeps (LD_LIBRARY_PATH) and the CUDA toolkit."""

import datetime
import hashlib
import json
import os
import pathlib
import shutil
import socket
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[2]
CARRIED = "carried.json"
SOURCE_DIRS = ["cmake", "harness", "benchmarks", "kernels", "tests"]


def sources_hash():
    """SHA-256 over every file the build compiles or configures from (no git needed)."""
    digest = hashlib.sha256()
    files = [ROOT / "CMakeLists.txt", ROOT / "CMakePresets.json"]
    for folder in SOURCE_DIRS:
        files += [
            f
            for f in (ROOT / folder).rglob("*")
            if f.suffix in (".cpp", ".h", ".cu", ".cuh", ".cmake") or f.name == "CMakeLists.txt"
        ]
    for f in sorted(files):
        digest.update(f.relative_to(ROOT).as_posix().encode() + b"\0" + f.read_bytes())
    return digest.hexdigest()


def pack_build(build_dir, dest):
    """Copies the built tree's executables and ctest files into dest; returns its size in bytes."""
    if (
        not (build_dir / "CTestTestfile.cmake").exists()
        or not (build_dir / "offloadbench").exists()
    ):
        raise FileNotFoundError(
            f"{build_dir} is not built: cmake --preset device && cmake --build --preset device"
        )
    shutil.rmtree(dest, ignore_errors=True)
    for path in build_dir.rglob("*"):
        relative = path.relative_to(build_dir)
        wanted = (
            path.name == "CTestTestfile.cmake"
            or path.name.endswith(("_tests.cmake", "_include.cmake"))
            or (os.access(path, os.X_OK) and path.suffix not in (".so", ".sh"))
        )
        if path.is_file() and wanted and "CMakeFiles" not in relative.parts:
            (dest / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, dest / relative)
    packed = datetime.datetime.now(datetime.timezone.utc)
    (dest / CARRIED).write_text(
        json.dumps(
            {
                "root": str(ROOT),
                "build_dir": str(build_dir.resolve()),
                "sources_sha256": sources_hash(),
                "host": socket.gethostname(),
                "packed": f"{packed:%Y-%m-%d %H:%M} UTC",
            },
            indent=2,
        )
    )
    return sum(f.stat().st_size for f in dest.rglob("*") if f.is_file())


def is_carried(build_dir):
    return (pathlib.Path(build_dir) / CARRIED).exists()


def origin_host(build_dir):
    return json.loads((pathlib.Path(build_dir) / CARRIED).read_text())["host"]


def missing_libraries(executables):
    """The shared libraries ldd cannot find for these executables here (sorted, each once); [] when
    all load, or when there is no ldd to ask."""
    if shutil.which("ldd") is None:
        return []
    missing = set()
    for exe in executables:
        listing = subprocess.run(
            ["ldd", str(exe)], capture_output=True, text=True, timeout=60
        ).stdout
        missing.update(
            line.split("=>")[0].strip() for line in listing.splitlines() if "not found" in line
        )
    return sorted(missing)


def use_carried_build(build_dir):
    """None when the carried tree's sources match this checkout's and its executables find their
    shared libraries here (its ctest files then point here), else why it cannot be used."""
    origin_path = build_dir / CARRIED
    origin = json.loads(origin_path.read_text())
    if origin["sources_sha256"] != sources_hash():
        return f"the sources changed since it was packed on {origin['host']} ({origin['packed']})"
    # Another image may keep CUDA or the BLAS elsewhere: building there beats a stage of exit-127 tests.
    executables = [build_dir / "offloadbench", *sorted((build_dir / "tests").glob("*_tests"))]
    if missing := missing_libraries([e for e in executables if e.is_file()]):
        return f"its executables cannot find {', '.join(missing[:4])} here"
    moves = [(origin["build_dir"], str(build_dir.resolve())), (origin["root"], str(ROOT))]
    for f in build_dir.rglob("*.cmake"):
        text = f.read_text()
        for old, new in moves:
            text = text.replace(old, new)
        f.write_text(text)
    origin.update(root=str(ROOT), build_dir=str(build_dir.resolve()))
    origin_path.write_text(json.dumps(origin, indent=2))
    return None
