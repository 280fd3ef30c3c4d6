"""What lab/tools/gpu-check's stages will run and how long each should take on the GPU machine (one
H100, 16 cores), counted from the program itself: the quick suite's cases (`offloadbench list
--json`), the GPU tests with their labels, COST and TIMEOUT (`ctest --show-only=json-v1`), and the
translation units (`compile_commands.json`) priced by compile times measured on the CPU machine
(lab/tools/build-times.json). The summary of a real run puts each stage's measured time beside its
estimate, and each step's log line its seconds, to correct them by. Measured on an H100 (PCIe Gen5
x16, 16 cores; 2026-11-26): first-light 105 and 107 s against 114 estimated; test 36 s against 221
(the tests' COSTs were then set from their measured times); suite 447 of its 615 cases in 90 s of
run time, transfer ~35-50 s of it (estimated 24 s: its set-up, not its copies, is underpriced).
Second H100 run (same machine): the whole quick suite, 615 cases, in 111.6 s of run time against
191 s estimated (mlp, transfer and streams, 238 cases, took 60-70 s of it), PyTorch 24 s, charts
29 s; the stage 167 s against 242; test 36 s; regression 124 s against 274 (its compute probe did not
run: ~1 s a process for the transfer probe alone); sanitize 16-19 s against 192 (the slowdowns below are from it)."""

import collections
import json
import os
import pathlib
import re
import subprocess

H100_CORES = 16
STAGE_LIMIT_S = 480  # each stage is stopped here: 8 of the device command's 10 minutes
DEVICE_CALL_S = (
    560  # --time-limit of one call on the GPU machine (10 minutes, less unpacking and margin)
)
RESERVE_S = 20  # kept back from --time-limit for the summary and the packing
SUITE_REPETITIONS = 3
PYTORCH_ANCHOR_S = (
    30  # lab/tools/gpu_anchors.py on 3 batches: import and CUDA start, 15 cases (measured 24 s)
)
QUICK_MIN_TIME_S = 0.02  # --benchmark_min_time of `run --quick` (cli/cmd_run.cpp)
FULL_MIN_TIME_S = 0.1  # and of `run --full`, which first light runs
# compute-sanitizer: each tool on the tests where it can find something in our own kernels (all of
# them in namespace offloadbench, which is how gpu-check tells our findings from a library's).
# Tests that run our shared-memory or synchronizing kernels: the dot/sum reduction, the tiled SGEMM,
# the mlp step's softmax and bias reductions (cuBLAS's GEMMs run there too), the word sum and the
# pointer chase. The copy gate is left out: one thread, no shared memory, no barrier (nothing for
# racecheck or synccheck to see), and a sanitizer that serializes launches would hold it shut.
SHARED_MEMORY_TESTS = [
    "GpuCompute.ElementwiseKernelsMatchTheirCpuTwins",
    "GpuCompute.TiledMatmulMatchesTheCpuTwinOnOddShapes",
    "GpuMlp.LossAndGradientsMatchTheCpuInEveryPrecision",
    "GpuTransferExtra.SumAndChaseMatchTheirTwins",
]
# Every test whose kernels are ours, for initcheck (reads of memory nothing wrote).
OUR_KERNEL_TESTS = SHARED_MEMORY_TESTS + [
    "GpuStreams.FmaWorkloadMatchesItsCpuTwin",
    "GpuTransferExtra.CopiesMatchTheirTwinsAtAnyAlignmentAndSize",
    "GpuBatches.NormalizeKernelMatchesItsCpuTwinInEveryOutputType",
]


class SanitizerRun(
    collections.namedtuple(
        "SanitizerRun",
        "limit_s slowdown options tests tool env library_writes",
        defaults=(None, {}, None),
    )
):
    """One compute-sanitizer process: its limit, its slowdown over a plain run, extra options, its tests
    (None: every correctness test), the tool when the run's name is not one, extra environment, and,
    where its findings are reads of memory a library wrote in a way the tool does not see, why."""


# Measured on an H100 (2026-11-26): memcheck 1.9 s, racecheck 9.5 s, synccheck 1.3 s, initcheck 3.3 s
# for these tests, each tool's start included; the slowdowns keep about twice that.
SANITIZER_TOOLS = {
    "memcheck": SanitizerRun(120, 0.5, ["--leak-check", "full"], None),
    "racecheck": SanitizerRun(100, 4, [], SHARED_MEMORY_TESTS),
    "synccheck": SanitizerRun(60, 0.5, [], SHARED_MEMORY_TESTS),
    # initcheck does not see the stores of the cuBLAS kernels that bf16/fp16 GEMMs run on Hopper (on an
    # H100 it flagged all 8,192 hidden pre-activations of each, read by our bias + ReLU kernel, in a
    # step whose values matched the CPU's): our kernels are checked in fp32, the rest runs apart.
    "initcheck": SanitizerRun(
        80, 1, [], OUR_KERNEL_TESTS, env={"OFFLOADBENCH_GPU_TEST_PRECISIONS": "fp32"}
    ),
    "initcheck, bf16/fp16 GEMM outputs": SanitizerRun(
        60,
        1,
        [],
        ["GpuMlp.LossAndGradientsMatchTheCpuInEveryPrecision"],
        tool="initcheck",
        env={"OFFLOADBENCH_GPU_TEST_PRECISIONS": "bf16,fp16"},
        library_writes="reads of cuBLAS's bf16/fp16 GEMM outputs, whose stores initcheck does not track; "
        "the test compares every value with the CPU's, so the memory was written",
    ),
}
# Set for the sanitizers' runs: the 200-step mlp loss-curve test takes 20 steps (tests/test_gpu_mlp.cpp).
SANITIZER_ENV = {"OFFLOADBENCH_SHORT_GPU_TESTS": "1"}
# first-light: every GPU code path once (lab/tools/gpu-check --stage first-light), in one short call.
# Two runs, each a process with its own results file: the paths a GPU has run before, most asked-for rows
# first; then the paths none has run yet, so a crash there loses only them.
FIRST_LIGHT_SUITES = "mlp,transfer,streams,compute"
# One case of each GPU code path (a regex search, as --benchmark_filter does), by family.
FIRST_LIGHT_CASES = [
    r"^mlp/784-128-10/(inference|train_sgd|train_adamw)/b(1|64|1024)/gpu/fp32/(eager|graph)/resident/",
    r"^mlp/784-128-10/train_sgd/b(1|64|1024)/gpu/bf16/(eager|graph)/resident/",
    r"^mlp/784-128-10/train_sgd/b64/(gpu/fp32/(eager|graph)/(pageable|pinned_overlap)|cpu_1t|cpu_all)/",
    r"^transfer/(h2d|d2h|bidirectional)/[a-z_]+/(64KiB|256MiB)/",
    r"^transfer/(device_local/[a-z_]+|sm_copy/[a-z0-9]+)/256MiB/",
    r"^transfer/(latency/|managed/[a-z_]+/64MiB/|small_tensors/[a-z_]+/n:256/|pin_cost/[a-z_]+/64MiB/)",
    r"^streams/((serial|async)/[a-z]+/ratio:1/|pipelined/[a-z]+/ratio:1/K:4/C:16/depth_first/"
    r"|pipelined_best/pinned/ratio:1/|bidirectional/pinned/|host_overlap/[a-z_]+/ratio:1/)64MiB/",
    # Each elementwise kernel both ways (one and four elements a thread: the default is whichever wins).
    r"^compute/((triad|dot)/fp32/(gpu_kernel/(256Mi|16Mi)|gpu_(pinned|pageable)/16Mi)|(copy/fp32|triad/fp64)/gpu_kernel/256Mi)/",
    r"^compute/sgemm/square/((tiled|vectorized|cublas_fp32|cublas_tf32|cublas_bf16)/gpu_kernel/4096"
    r"|cublas_bf16/gpu_kernel/8192|tiled/gpu_pinned/4096)/",
]
FIRST_LIGHT_FILTER = "|".join(f"({case})" for case in FIRST_LIGHT_CASES)
# The paths no GPU has run yet: PyTorch's copy idioms, all four pinning methods at 1 GiB (huge pages and
# not), image batches, and the peer suite (one GPU: every row skips with its reason, at no cost; the
# peer runner's one-GPU host patterns run in FIRST_LIGHT_NEW_TESTS).
FIRST_LIGHT_NEW_SUITES = "transfer,batches,peer"
FIRST_LIGHT_NEW_CASES = [
    r"^transfer/(torch_idiom/([a-z_]+/batch:64|result_to_[a-z]+/|item/)"
    r"|pin_at_scale/(host_alloc|register_fresh|register_touched|register_chunks)/[a-z]+/1GiB)",
    r"^batches/224x224x3/[a-z0-9_]+/[a-z]+/batch:64",
    r"^peer/",
]
FIRST_LIGHT_NEW_FILTER = "|".join(f"({case})" for case in FIRST_LIGHT_NEW_CASES)
# Tests of the never-run paths that time calls (label gpu_timing, so not among the correctness tests run
# side by side): one at a time, after the correctness tests. Seconds each on an H100, estimated: the
# pinning test pins 600 MiB eight times over (four methods, huge pages and not).
FIRST_LIGHT_NEW_TESTS = {
    "GpuPeer.HostPatternsOnOneGpuMoveTheirBytes": 3,
    "GpuTransferIdioms.EveryIdiomDeliversEveryBatchToTheStep": 4,
    "GpuTransferIdioms.EveryPinningMethodPinsVerifiesAndTimesItsCopies": 15,
    "GpuBatches.EveryPlacementRunsAndSendsItsBytes": 5,
}
FIRST_LIGHT_TEST_JOBS = 4  # correctness tests side by side (they check outputs, not times)
# Each part's share of the stage, in the order they run; the stage's own limit still stops all of it.
FIRST_LIGHT_LIMITS_S = {
    "info": 10,
    "tests": 60,
    "run": 130,
    "pytorch": 50,
    "summary": 10,
    "plots": 35,
    "new_tests": 45,
    "new_run": 100,
}
FIRST_LIGHT_BUDGET_S = 360  # the stage's estimate must fit here, machine start not counted
FIRST_LIGHT_LIMIT_S = 440  # and it is stopped here (its parts' limits add up to 440)
PYTORCH_FIRST_LIGHT_S = 40  # import, CUDA start, 12 mlp cases and two 256 MiB copies of ~1.5 s each
SMI_FIELDS = [
    "name",
    "persistence_mode",
    "clocks.sm",
    "clocks.max.sm",
    "clocks.mem",
    "power.draw",
    "pcie.link.gen.current",
    "pcie.link.gen.max",
    "pcie.link.gen.gpumax",
    "pcie.link.gen.hostmax",
    "pcie.link.width.current",
    "pcie.link.width.max",
    "driver_version",
]
# regression: the GPU half of the A/B self-test (lab/tools/regression-selftest --gpu) at a size that fits
# one call: 2 A/A runs and 2 runs at each injected slowdown, 6 rounds (10 at most) of two processes each.
REGRESSION_ARGS = [
    "--aa",
    "2",
    "--power-runs",
    "2",
    "--levels",
    "5,10",
    "--rounds",
    "6",
    "--max-rounds",
    "10",
    "--min-time",
    "0.05",
]
REGRESSION_REPETITIONS = 3  # what regression-selftest asks ab for
AB_PROCESS_S = 2  # one ab round's process: CUDA context and cuBLAS handle (persistence on), machine info; a guess
SANITIZER_START_S = 3  # context, cuBLAS handle and the tool's own start, per tool (measured 1-2 s)
PROCESS_START_S = 5  # CUDA context, cuBLAS handles, machine info, per offloadbench or test process

# Rates for the suite model: guesses for an H100 machine's GPU and 16-core host, to be corrected by
# the times a real run reports.
GPU_FLOP_PER_S = 4e13
GPU_BYTES_PER_S = 2.5e12
GPU_SHORTEST_CALL_S = 3e-6  # an event-timed kernel or step is never shorter (launch latency)
LINK_BYTES_PER_S = 1e10  # pageable PCIe copies, the slow end (an H100 host: 8-16 GB/s measured)
LINK_LATENCY_S = 1e-5
HOST_FLOP_PER_S_PER_CORE = 4e10
HOST_BYTES_PER_S_ONE_THREAD = 1e10
HOST_BYTES_PER_S_ALL = 6e10
# Wall time around each timed GPU call that its events do not see: the L2 flush and the launch gate
# of a cold kernel view; batched copies and steps pay far less per call.
UNTIMED_PER_CALL_S = {"gpu_kernel": 3e-5, "device_copy": 2e-6}
UNTIMED_PER_CALL_OTHER_S = 1e-5
CASE_SETUP_S = 0.05  # register, allocate, verify once, free
SETUP_PASSES = (
    6  # passes over a case's bytes while setting up and verifying (fill, copy back, compare)
)
# Google Benchmark 1.7.1 finds the iteration count in the first repetition (growing it up to tenfold
# a try, about 2x min_time in all) and reuses it in the others (about 1.4x min_time each).
FIRST_REPETITION_MIN_TIMES = 2.0
LATER_REPETITION_MIN_TIMES = 1.4

BUILD_TIMES = pathlib.Path(__file__).with_name("build-times.json")


def _run_json(command, cwd=None):
    out = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, command))} failed: {out.stderr.strip()[:300]}")
    return json.loads(out.stdout)


# ---- suite ----


def _is_gpu(fields):
    return fields.get("device") != "cpu"


def call_seconds(fields):
    """(timed, wall) seconds of one timed call of a case, from its declared work (FLOPs, bytes)."""
    flops = fields.get("flops") or fields.get("flops_per_step") or 0
    work_bytes = (fields.get("bytes") or 0) * (
        2 if fields.get("direction") == "bidirectional" else 1
    )
    if not _is_gpu(fields):
        all_threads = (fields.get("cpu_threads") or 1) > 1 or fields.get("view") == "cpu_all"
        timed = flops / (
            HOST_FLOP_PER_S_PER_CORE * (H100_CORES if all_threads else 1)
        ) + work_bytes / (HOST_BYTES_PER_S_ALL if all_threads else HOST_BYTES_PER_S_ONE_THREAD)
        return timed, timed
    timed = max(GPU_SHORTEST_CALL_S, flops / GPU_FLOP_PER_S + work_bytes / GPU_BYTES_PER_S)
    copied = fields.get("transfer_bytes") or (
        work_bytes if fields.get("family") in ("transfer", "streams") else 0
    )
    if copied or fields.get("view") in ("gpu_pinned", "gpu_pageable", "gpu_pinned_overlap"):
        timed += LINK_LATENCY_S + copied / LINK_BYTES_PER_S
    untimed = UNTIMED_PER_CALL_S.get(
        fields.get("view"), UNTIMED_PER_CALL_S.get(fields.get("op"), UNTIMED_PER_CALL_OTHER_S)
    )
    return timed, timed + untimed


# Google Benchmark stops a case's repetition on its own clock: for a device-timed case the events', so
# the wall time around them (flushes, launch gates: per batch of calls, not per call) adds a share,
# never a multiple. Measured on an H100: device-timed mlp steps of 7-25 µs took 1.4 x min_time a
# repetition (3 repetitions of 0.1 s: 0.42 s timed in all).
WALL_PER_TIMED_MAX = 1.5
# Pinning at scale, priced from the H100's pin_cost rows (256 MiB medians, 2026-11-26): cudaHostAlloc +
# cudaFreeHost 0.101 s; cudaHostRegister + cudaHostUnregister of touched memory 0.0117 s; the first touch
# of fresh 4 KiB pages 0.127 s (registering untouched memory faults its pages in: the same cost).
PIN_S_PER_BYTE = {"host_alloc": 0.101 / (256 << 20), "register": 0.0117 / (256 << 20)}
FIRST_TOUCH_S_PER_BYTE = 0.127 / (256 << 20)
HUGE_PAGE_TOUCH_SHARE = 0.4  # a guess, to be corrected: 512x fewer faults, the same zeroing
PINNED_LINK_BYTES_PER_S = 5e10  # pinned H2D on PCIe Gen5 x16 (55 GB/s measured on an H100)
PINNING_CALLS_BEFORE_REPETITIONS = 3  # the check's, the warm-up's, and the pinned copies' memory


def pinning_seconds(fields, repetitions):
    """One pin_at_scale case (benchmarks/transfer/transfer_pinning_scale_run_gpu.cpp): every call maps,
    touches (when the method does, or when registering faults the pages in), pins, unpins and unmaps its
    bytes; a call of 0.1-10 s is one Google Benchmark iteration, so a repetition is one call. Beside the
    calls: the check's fill and compare, 2 + 3 pinned copies, 3 pageable copies of freshly touched memory."""
    size = fields.get("bytes") or 0
    touch = (
        FIRST_TOUCH_S_PER_BYTE
        * size
        * (HUGE_PAGE_TOUCH_SHARE if fields.get("huge_pages") == "madvise" else 1)
    )
    if fields.get("method") == "host_alloc":
        call = PIN_S_PER_BYTE["host_alloc"] * size
    else:
        call = (
            touch + PIN_S_PER_BYTE["register"] * size
        )  # register_fresh's faults cost what a touch costs
    copies = 5 * size / PINNED_LINK_BYTES_PER_S + touch + 3 * size / LINK_BYTES_PER_S
    return (
        CASE_SETUP_S
        + (PINNING_CALLS_BEFORE_REPETITIONS + repetitions) * call
        + copies
        + 2 * size / HOST_BYTES_PER_S_ONE_THREAD
    )


def skipped_everywhere(fields):
    """A case registered as a skipped row, which costs nothing: a peer pattern below two GPUs (it has no
    size; benchmarks/peer/peer_cases.cpp)."""
    return fields.get("op") == "peer" and not fields.get("bytes")


def case_seconds(fields, repetitions=SUITE_REPETITIONS, min_time=QUICK_MIN_TIME_S):
    """Wall seconds of one case: set-up, then repetitions of at least min_time of timed seconds each."""
    if skipped_everywhere(fields):
        return 0.0
    if fields.get("op") == "pin_at_scale":
        return pinning_seconds(fields, repetitions)
    timed, wall = call_seconds(fields)
    ratio = wall / timed if not _is_gpu(fields) else min(wall / timed, WALL_PER_TIMED_MAX)
    min_time = fields.get("min_time_s") or min_time
    first = max(FIRST_REPETITION_MIN_TIMES * min_time * ratio, wall)
    later = max(LATER_REPETITION_MIN_TIMES * min_time * ratio, wall)
    setup = CASE_SETUP_S + SETUP_PASSES * (fields.get("bytes") or 0) / HOST_BYTES_PER_S_ONE_THREAD
    return setup + first + later * (repetitions - 1)


def stage_limit_s(name):
    return FIRST_LIGHT_LIMIT_S if name == "first-light" else STAGE_LIMIT_S


def first_light_cases(offloadbench, pattern=None, suites=FIRST_LIGHT_SUITES):
    """The cases a first-light run selects: the full sweep of its suites, filtered as Google Benchmark
    filters them (a regex search in the case's name)."""
    regex = re.compile(pattern or FIRST_LIGHT_FILTER)
    cases = _run_json([str(offloadbench), "list", "--full", "--json", "--suite", suites])
    return [
        c for c in cases if regex.search(c["name"] + "/")
    ]  # Google Benchmark's names go on: /manual_time


def first_light_new_cases(offloadbench):
    return first_light_cases(offloadbench, FIRST_LIGHT_NEW_FILTER, FIRST_LIGHT_NEW_SUITES)


def run_seconds(cases):
    """{family: [seconds of each case]} of one `run --full` of `cases`, and the process's seconds in all."""
    by_family = {}
    for case in cases:
        fields = dict(
            case["fields"], **({"min_time_s": case["min_time_s"]} if case.get("min_time_s") else {})
        )
        by_family.setdefault(fields.get("family", "?"), []).append(
            case_seconds(fields, SUITE_REPETITIONS, FULL_MIN_TIME_S)
        )
    return by_family, PROCESS_START_S + sum(sum(v) for v in by_family.values())


# First light's run locates its crossovers (run --refine-crossovers): a few rounds, each a fresh process
# measuring, for every question of a refinable sweep, one size in each of its views.
FIRST_LIGHT_REFINE_ROUNDS = 2
REFINABLE_SWEEPS = {"compute": "elements", "mlp": "batch"}  # Suite::refinable_sweep of each family


def refine_seconds(cases, rounds=FIRST_LIGHT_REFINE_ROUNDS):
    """Seconds of `rounds` refinement rounds after a `run --full` of `cases`: per round a process start
    and, per refinable question, each view once at its median case's cost."""
    views = {}
    for case in cases:
        fields = dict(
            case["fields"], **({"min_time_s": case["min_time_s"]} if case.get("min_time_s") else {})
        )
        if (
            REFINABLE_SWEEPS.get(fields.get("family")) != fields.get("sweep")
            or fields.get("kernel") == "four_per_thread"
        ):
            continue
        key = (
            fields.get("compare_group"),
            fields.get("view"),
            fields.get("series"),
            fields.get("cpu_threads"),
        )
        views.setdefault(key, []).append(case_seconds(fields, SUITE_REPETITIONS, FULL_MIN_TIME_S))
    if not views:
        return 0.0
    per_round = PROCESS_START_S + sum(sorted(v)[len(v) // 2] for v in views.values())
    return rounds * per_round


def first_light_plan(build_dir, offloadbench, ctest="ctest"):
    all_tests = gpu_tests(build_dir, ctest)
    tests = [t for t in all_tests if t["kind"] == "correctness"]
    missing = sorted(set(FIRST_LIGHT_NEW_TESTS) - {t["name"] for t in all_tests})
    if missing:
        raise ValueError(
            f"first light names GPU tests this build does not have: {', '.join(missing)}"
        )
    # Side by side: the longest test, or the total over the jobs, whichever is longer.
    tests_s = PROCESS_START_S + max(
        [t["cost"] for t in tests] + [sum(t["cost"] for t in tests) / FIRST_LIGHT_TEST_JOBS]
    )
    new_tests_s = PROCESS_START_S + sum(FIRST_LIGHT_NEW_TESTS.values())
    cases, new_cases = first_light_cases(offloadbench), first_light_new_cases(offloadbench)
    by_family, run_s = run_seconds(cases)
    new_by_family, new_run_s = run_seconds(new_cases)
    run_s += refine_seconds(cases)  # the run's own rounds of locating crossovers
    seconds = (
        2 * PROCESS_START_S + tests_s + run_s + PYTORCH_FIRST_LIGHT_S + 10 + new_tests_s + new_run_s
    )

    def parts(families):
        return ", ".join(f"{name} {len(v)} ({sum(v):.0f} s)" for name, v in families.items())

    return {
        "count": len(tests) + len(FIRST_LIGHT_NEW_TESTS) + len(cases) + len(new_cases),
        "estimate_s": seconds,
        "tests_s": tests_s,
        "run_s": run_s,
        "new_tests_s": new_tests_s,
        "new_run_s": new_run_s,
        "families": sorted(set(by_family) | set(new_by_family)),
        "what": f"info; {len(tests)} correctness tests, {FIRST_LIGHT_TEST_JOBS} at a time ({tests_s:.0f} s); "
        f"one run of {len(cases)} cases: {parts(by_family)}, {FIRST_LIGHT_REFINE_ROUNDS} rounds locating "
        f"crossovers ({refine_seconds(cases):.0f} s) ({run_s:.0f} s); PyTorch "
        f"({PYTORCH_FIRST_LIGHT_S} s); summary, charts; then the never-run paths: "
        f"{len(FIRST_LIGHT_NEW_TESTS)} tests one at a time ({new_tests_s:.0f} s) and a run of their own "
        f"of {len(new_cases)} cases: {parts(new_by_family)} ({new_run_s:.0f} s)",
    }


def suite_plan(offloadbench):
    cases = _run_json([str(offloadbench), "list", "--json"])
    by_family = {}
    for case in cases:
        fields = dict(
            case["fields"], **({"min_time_s": case["min_time_s"]} if "min_time_s" in case else {})
        )
        family = by_family.setdefault(
            fields.get("family", "?"), {"cases": 0, "gpu": 0, "seconds": 0.0}
        )
        family["cases"] += 1
        family["gpu"] += _is_gpu(fields)
        family["seconds"] += case_seconds(fields)
    seconds = PROCESS_START_S + sum(f["seconds"] for f in by_family.values()) + PYTORCH_ANCHOR_S
    parts = ", ".join(
        f"{name} {f['cases']} ({f['seconds']:.0f} s)" for name, f in by_family.items()
    )
    parts += f"; PyTorch eager on the mlp steps ({PYTORCH_ANCHOR_S} s)"
    own = sum(bool(c.get("min_time_s")) for c in cases)
    return {
        "count": len(cases),
        "estimate_s": seconds,
        "what": f"quick suite, {SUITE_REPETITIONS} repetitions, min time {QUICK_MIN_TIME_S} s "
        f"({own} cases their own): {parts}",
    }


# ---- tests and sanitizers ----


def gpu_tests(build_dir, ctest="ctest"):
    """The GPU tests of a configured build (labels gpu_correctness, gpu_timing):
    [{name, kind (correctness or timing), cost, timeout, command}]."""
    listing = _run_json([ctest, "--test-dir", str(build_dir), "--show-only=json-v1"])
    tests = []
    for t in listing["tests"]:
        props = {p["name"]: p["value"] for p in t.get("properties", [])}
        kinds = [
            label[len("gpu_") :] for label in props.get("LABELS", []) if label.startswith("gpu_")
        ]
        if kinds:
            tests.append(
                {
                    "name": t["name"],
                    "kind": kinds[0],
                    "cost": float(props.get("COST", 0)),
                    "timeout": float(props.get("TIMEOUT", 0)),
                    "command": t.get("command", []),
                }
            )
    return tests


def test_plan(tests):
    correctness = [t for t in tests if t["kind"] == "correctness"]
    timing = [t for t in tests if t["kind"] == "timing"]
    return {
        "count": len(tests),
        "estimate_s": 2 * PROCESS_START_S + sum(t["cost"] for t in tests),
        "worst_s": sum(t["timeout"] for t in tests),
        "what": f"GPU tests, one at a time: {len(correctness)} correctness, {len(timing)} timing "
        f"(sum of COST; sum of TIMEOUT {sum(t['timeout'] for t in tests):.0f} s)",
    }


def sanitizer_tests(tool, tests):
    """The GPU tests (dicts of gpu_tests) a sanitizer tool runs; a listed name that is not a test is an error."""
    wanted = SANITIZER_TOOLS[tool].tests
    if wanted is None:
        return [t for t in tests if t["kind"] == "correctness"]
    by_name = {t["name"]: t for t in tests}
    missing = [name for name in wanted if name not in by_name]
    if missing:
        raise ValueError(
            f"{tool}: no GPU test named {', '.join(missing)} (renamed? see SANITIZER_TOOLS)"
        )
    return [by_name[name] for name in wanted]


def sanitize_plan(tests):
    tools = {}
    for tool, run in SANITIZER_TOOLS.items():
        chosen = sanitizer_tests(tool, tests)
        tools[tool] = {
            "estimate_s": SANITIZER_START_S + run.slowdown * sum(t["cost"] for t in chosen),
            "limit_s": run.limit_s,
            "tests": [t["name"] for t in chosen],
        }
    limits = ", ".join(
        f"{name} {len(t['tests'])} tests, {t['limit_s']} s" for name, t in tools.items()
    )
    return {
        "count": sum(len(t["tests"]) for t in tools.values()),
        "estimate_s": sum(t["estimate_s"] for t in tools.values()),
        "tools": tools,
        "what": f"{len(tools)} tools, one process each, each on its own tests and limit ({limits}); "
        f"the long mlp test shortened",
    }


def selftest_module():
    """lab/tools/regression-selftest as a module (its probe lists live there)."""
    import importlib.machinery
    import importlib.util

    path = pathlib.Path(__file__).with_name("regression-selftest")
    loader = importlib.machinery.SourceFileLoader("regression_selftest", str(path))
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
    loader.exec_module(module)
    return module


def regression_plan(offloadbench, args=REGRESSION_ARGS):
    """Every ab run of the self-test, each a number of rounds of two processes that run the GPU probe."""
    option = {args[i]: args[i + 1] for i in range(0, len(args), 2)}
    probe = [name for names in selftest_module().GPU_PROBE.values() for name in names]
    listed = {
        c["name"]: c
        for c in _run_json(
            [str(offloadbench), "list", "--full", "--json", "--suite", "transfer,compute"]
        )
    }
    missing = [name for name in probe if name not in listed]
    if missing:
        raise ValueError(
            f"the GPU probe names cases this build does not list: {', '.join(missing)}"
        )
    min_time = float(option["--min-time"])
    process_s = AB_PROCESS_S + sum(
        case_seconds(listed[name]["fields"], REGRESSION_REPETITIONS, min_time) for name in probe
    )
    runs = int(option["--aa"]) + int(option["--power-runs"]) * len(option["--levels"].split(","))
    rounds, max_rounds = int(option["--rounds"]), int(option["--max-rounds"])
    return {
        "count": runs,
        "estimate_s": runs * rounds * 2 * process_s,
        "worst_s": runs * max_rounds * 2 * process_s,
        "what": f"regression-selftest --gpu: {runs} ab runs of {rounds} rounds (up to {max_rounds}), two processes "
        f"a round of {process_s:.1f} s each ({len(probe)} probe cases, min time {min_time} s)",
    }


# ---- build ----


def lpt_makespan(durations, workers):
    """Longest-processing-time-first schedule on `workers`: what ninja -j N gets at best."""
    loads = [0.0] * workers
    for d in sorted(durations, reverse=True):
        loads[loads.index(min(loads))] += d
    return max(loads)


def build_plan(build_dir, cores=H100_CORES, measured_path=BUILD_TIMES):
    measured = json.loads(pathlib.Path(measured_path).read_text())
    units = json.loads((pathlib.Path(build_dir) / "compile_commands.json").read_text())
    root = pathlib.Path(build_dir).resolve().parent.parent
    known, durations, new = measured["compile_cpu_s"], [], 0
    means = {
        ext: sum(v for k, v in known.items() if k.endswith(ext))
        / max(1, sum(k.endswith(ext) for k in known))
        for ext in (".cu", ".cpp")
    }
    for unit in units:
        source = os.path.relpath(unit["file"], root)
        if source in known:
            durations.append(known[source])
        else:
            new += 1
            durations.append(means[".cu" if source.endswith(".cu") else ".cpp"])
    compile_s = lpt_makespan(durations, cores) * measured["cpu_speed_factor"]
    link_s = measured["link_wall_s"] * measured["cpu_speed_factor"]
    seconds = measured["configure_s"] + compile_s + link_s
    return {
        "count": len(units),
        "estimate_s": seconds,
        "what": f"configure ({measured['configure_s']:.0f} s) + {len(units)} translation units on {cores} cores "
        f"({compile_s:.0f} s; {new} not measured, priced at the mean) + links ({link_s:.0f} s)",
    }


def plan(build_dir, offloadbench, ctest="ctest", cores=H100_CORES):
    tests = gpu_tests(build_dir, ctest)
    stages = {
        "build": build_plan(build_dir, cores),
        "first-light": first_light_plan(build_dir, offloadbench, ctest),
        "test": test_plan(tests),
        "suite": suite_plan(offloadbench),
        "sanitize": sanitize_plan(tests),
        "regression": regression_plan(offloadbench),
    }
    for name, stage in stages.items():
        stage["limit_s"] = stage_limit_s(name)
        stage["fits"] = stage["estimate_s"] <= (
            FIRST_LIGHT_BUDGET_S if name == "first-light" else stage["limit_s"]
        )
        if name != "build":  # on a machine gone cold, the call builds first
            stage["cold_call_s"] = stages["build"]["estimate_s"] + stage["estimate_s"]
            stage["fits"] &= stage["cold_call_s"] <= DEVICE_CALL_S - RESERVE_S
    for tool in stages["sanitize"]["tools"].values():
        tool["fits"] = tool["estimate_s"] <= tool["limit_s"]
        stages["sanitize"]["fits"] &= tool["fits"]
    return stages


def format_plan(stages, cores=H100_CORES):
    lines = [
        f"gpu-check plan: estimated seconds on one H100 machine ({cores} cores); each stage is stopped at "
        f"its limit",
        f"{'stage':<9} {'count':>5} {'estimate':>9} {'limit':>6}  what",
    ]
    for name, s in stages.items():
        flag = "" if s["fits"] else "  OVER BUDGET"
        lines.append(
            f"{name:<9} {s['count']:>5} {s['estimate_s']:>8.0f}s {s['limit_s']:>5}s  {s['what']}{flag}"
        )
    for tool, t in stages["sanitize"]["tools"].items():
        flag = "" if t["fits"] else "  OVER BUDGET"
        lines.append(f"  {tool:<12} {t['estimate_s']:>12.0f}s {t['limit_s']:>5}s{flag}")
    cold = ", ".join(
        f"build + {name} {s['cold_call_s']:.0f} s"
        for name, s in stages.items()
        if "cold_call_s" in s
    )
    lines.append(
        f"one GPU-machine call on a cold machine (--time-limit {DEVICE_CALL_S}, "
        f"{DEVICE_CALL_S - RESERVE_S} s for stages): {cold}"
    )
    lines.append(
        "build: compile seconds measured per translation unit on the CPU machine (lab/tools/build-times.json), "
        "scheduled longest first on the cores; tests: COST per label (tests/CMakeLists.txt); suite: each "
        "case's FLOPs and bytes at guessed rates (lab/tools/gpu_check_plan.py)"
    )
    return "\n".join(lines)
