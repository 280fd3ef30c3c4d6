"""PyTorch (eager, CPU) and numpy timings of the CPU cases offloadbench measures, written as an offloadbench
results file (view cpu_1t/cpu_all, series "pytorch"/"numpy"), so compare, the report and the charts put
them beside offloadbench's own CPU rows. Run through lab/tools/cpu-anchors, which makes the virtual
environment; see that script for usage. The measurement follows offloadbench's rules: the case's output
is checked first (which also warms it up), then `repetitions` timed repetitions of at least `min_time`
seconds each; a repetition reports wall seconds per step; aggregates are mean, median, stddev and cv.

How a step is written in PyTorch (what the mlp rows time):
    model = nn.Sequential(nn.Linear(D, H), nn.ReLU(), nn.Linear(H, C))   # fp32, nn.Linear's own init
    loss_fn = nn.CrossEntropyLoss()                                      # mean over the batch
    opt = torch.optim.SGD(model.parameters(), lr=0.1)                    # train_sgd
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)  # train_adamw (PyTorch defaults)
    inference:  with torch.inference_mode(): logits = model(x)
    training:   opt.zero_grad(set_to_none=True); loss_fn(model(x), y).backward(); opt.step()
x needs no gradient (as offloadbench's step computes no dx). The optimizer runs with PyTorch's default
implementation and with fused=True; the faster of the two (after a short trial) is timed and named in
the row's `optimizer_impl`. The data set cycles through the same number of distinct seeded batches as
offloadbench's (2 to 8).
"""

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from datetime import datetime, timezone

SHAPES = {"784-128-10": (784, 128, 10), "12288-64-10": (12288, 64, 10)}
ISSUE_BATCHES = [1, 64, 1024, 4096]
SQUARE_SIZES = [256, 512, 1024, 2048, 4096]
ELEMENTWISE_SIZES = [1 << 10, 1 << 16, 1 << 20, 1 << 24, 1 << 26]
# BabelStream weights (arrays moved), as kernels/elementwise.h counts them.
ELEMENTWISE_ARRAYS = {
    "copy": 2,
    "scale": 2,
    "add": 3,
    "triad": 3,
    "dot": 2,
    "add_scalar": 2,
    "axpby": 3,
}
SCALAR = 0.4
AXPBY_A, AXPBY_B = 0.75, -1.25  # kernels/elementwise.h's AxpbyOp


def count_label(n):
    for unit, shift in (("Mi", 20), ("Ki", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift}{unit}"
    return str(n)


def time_case(step, repetitions, min_time, before_repetition=None):
    """(wall seconds, calls, CPU seconds of this thread) per call for each repetition: calls are batched so each
    repetition lasts >= min_time. The thread's CPU time is Google Benchmark's cpu_time, as offloadbench's rows
    have it: on a busy machine it shows the work apart from the time spent waiting for a core.
    before_repetition, if given, runs untimed before each repetition."""
    start = time.perf_counter()
    step()
    one = max(time.perf_counter() - start, 1e-7)
    calls = max(1, int(min_time / one))
    samples = []
    for _ in range(repetitions):
        if before_repetition:
            before_repetition()
        start, start_cpu = time.perf_counter(), time.thread_time()
        for _ in range(calls):
            step()
        samples.append(
            ((time.perf_counter() - start) / calls, calls, (time.thread_time() - start_cpu) / calls)
        )
    return samples


# ---- mlp steps (PyTorch) ----


def dataset_batches(rows):
    return min(max((1 << 12) // rows, 2), 8)


def make_dataset(torch, shape, rows, seed=42):
    D, _, C = shape
    g = torch.Generator().manual_seed(seed)
    n = dataset_batches(rows) * rows
    x = torch.rand(n, D, generator=g) * 2 - 1
    teacher = torch.randn(C, D, generator=g)
    labels = (x.double() @ teacher.double().T).argmax(dim=1)
    return [
        (x[i * rows : (i + 1) * rows].contiguous(), labels[i * rows : (i + 1) * rows].contiguous())
        for i in range(dataset_batches(rows))
    ]


def make_optimizer(torch, params, kind, fused):
    extra = {"fused": True} if fused else {}
    if kind == "sgd":
        return torch.optim.SGD(params, lr=0.1, **extra)
    return torch.optim.AdamW(params, lr=1e-3, weight_decay=0.01, **extra)


def mlp_case(torch, model_name, batch, variant, repetitions, min_time):
    nn = torch.nn
    shape = SHAPES[model_name]
    D, H, C = shape
    torch.manual_seed(1234)
    model = nn.Sequential(nn.Linear(D, H), nn.ReLU(), nn.Linear(H, C))
    data = make_dataset(torch, shape, batch)
    loss_fn = nn.CrossEntropyLoss()
    fields = {"validated": True}
    cursor = [0]

    def next_batch():
        x, y = data[cursor[0]]
        cursor[0] = (cursor[0] + 1) % len(data)
        return x, y

    if variant == "inference":

        def step():
            with torch.inference_mode():
                return model(next_batch()[0])

        logits = step().double()
        x0 = data[0][0][0].double()
        w1, b1, w2, b2 = (p.detach().double() for p in model.parameters())
        ref = w2 @ torch.relu(w1 @ x0 + b1) + b2
        if not torch.allclose(logits[0], ref, rtol=1e-4, atol=1e-5):
            fields = {
                "validated": False,
                "invalid_reason": "logits of row 0 differ from a float64 recomputation",
            }
        impl = "inference_mode"
    else:
        kind = variant.split("_")[1]
        initial = [p.detach().clone() for p in model.parameters()]

        def build(fused):
            with torch.no_grad():
                for p, p0 in zip(model.parameters(), initial):
                    p.copy_(p0)
            opt = make_optimizer(torch, model.parameters(), kind, fused)

            def step():
                x, y = next_batch()
                opt.zero_grad(set_to_none=True)
                loss = loss_fn(model(x), y)
                loss.backward()
                opt.step()
                return loss

            return step

        # The faster of the default and the fused optimizer, over a short trial from the same weights.
        trial = {}
        for fused in (False, True):
            try:
                step = build(fused)
                trial[fused] = statistics.median(s[0] for s in time_case(step, 3, min_time / 4))
            except (RuntimeError, TypeError):  # fused not supported for this optimizer on the CPU
                pass
        fused = min(trial, key=trial.get)
        step = build(fused)
        impl = "fused" if fused else "default (single-tensor)"
        cursor[0] = 0
        x0, y0 = data[0]
        with torch.no_grad():
            first = float(loss_fn(model(x0), y0))
        for _ in range(10):
            step()
        with torch.no_grad():
            last = float(loss_fn(model(x0), y0))
        fields = {
            "initial_loss": first,
            "final_loss": last,
            "loss_steps": 10,
            "validated": last < first,
        }
        if not last < first:
            fields["invalid_reason"] = (
                f"10 training steps did not lower the loss: {first:.6g} -> {last:.6g}"
            )
    if variant == "inference":
        samples = time_case(step, repetitions, min_time)
    else:
        # Every repetition trains from the seeded weights with a fresh optimizer, as offloadbench's CPU rows
        # restart every 256 steps: left running, AdamW's moments of units no sample activates turn
        # subnormal after ~800 steps, which x86 computes 10-12% slower per step (lab/records/cpu-baseline.md).
        current = [step]
        samples = time_case(
            lambda: current[0](),
            repetitions,
            min_time,
            before_repetition=lambda: current.__setitem__(0, build(fused)),
        )
    fwd = 2.0 * batch * (D * H + H * C)
    flops = fwd if variant == "inference" else fwd + 2.0 * batch * H * C * 2 + 2.0 * batch * D * H
    fields.update(
        {
            "family": "mlp",
            "op": "mlp_step",
            "model": model_name,
            "inputs": D,
            "hidden": H,
            "classes": C,
            "batch": batch,
            "variant": "inference" if variant == "inference" else "train",
            "step_variant": variant,
            "accum_steps": 1,
            "samples_per_step": batch,
            "flops_per_step": flops,
            "compare_group": f"mlp/{model_name}/{variant}",
            "sweep": "batch",
            "precision": "fp32",
            "optimizer": None if variant == "inference" else variant.split("_")[1],
            "max_grad_norm": None,
            "launch_mode": None,
            "data_path": "host",
            "optimizer_impl": impl,
        }
    )
    name = f"mlp/{model_name}/{variant}/b{batch}"
    return name, fields, samples, {"samples_per_second": batch, "flop_per_second": flops}


# ---- sgemm (PyTorch and numpy) ----


def sgemm_cases(square_sizes, batches):
    for n in square_sizes:
        yield "square", n, n, n, "n"
    for b in batches:
        yield "mlp_784x128", b, 128, 784, "batch"
        yield "mlp_128x10", b, 10, 128, "batch"


def sgemm_case(lib, np, torch, group, m, n, k, sweep, repetitions, min_time):
    rng = np.random.default_rng(1)
    a = (rng.integers(-64, 65, size=(m, k)) / 64).astype(np.float32)
    b = (rng.integers(-64, 65, size=(k, n)) / 64).astype(np.float32)
    out = np.empty((m, n), np.float32)
    if lib == "pytorch":
        ta, tb, tout = torch.from_numpy(a), torch.from_numpy(b), torch.from_numpy(out)
        step = lambda: torch.mm(ta, tb, out=tout)  # noqa: E731
    else:
        step = lambda: np.matmul(a, b, out=out)  # noqa: E731
    step()
    rows = rng.integers(0, m, 16)
    ref = a[rows].astype(np.float64) @ b.astype(np.float64)
    ok = bool(np.allclose(out[rows], ref, rtol=1e-5, atol=1e-4 * np.sqrt(k)))
    samples = time_case(step, repetitions, min_time)
    flops = 2.0 * m * n * k
    fields = {
        "family": "compute",
        "op": "sgemm",
        "precision": "fp32",
        "accumulate": "fp32",
        "m": m,
        "n": n,
        "k": k,
        "flops": flops,
        "bytes": (m * k + k * n + m * n) * 4,
        "compare_group": f"compute/sgemm/{group}",
        "sweep": sweep,
        "validated": ok,
    }
    if sweep == "batch":
        fields["batch"] = m
    if not ok:
        fields["invalid_reason"] = "sampled rows differ from a float64 recomputation"
    size = str(n) if sweep == "n" else f"batch:{m}"
    return f"compute/sgemm/{group}/{lib}", size, fields, samples, {"flop_per_second": flops}


# ---- elementwise (numpy and PyTorch), fp32 ----


def elementwise_ops(lib, np, torch, x, y, z, w):
    """w: scratch for the ops numpy cannot write in one pass."""
    s, a, b = np.float32(SCALAR), np.float32(AXPBY_A), np.float32(AXPBY_B)
    if lib == "numpy":
        return {
            "copy": lambda: np.copyto(z, x),
            "scale": lambda: np.multiply(x, s, out=z),
            "add": lambda: np.add(x, y, out=z),
            # numpy has no fused triad or axpby: more passes (still counted as BabelStream's 3 arrays).
            "triad": lambda: (np.multiply(y, s, out=z), np.add(x, z, out=z)),
            "dot": lambda: np.dot(x, y),
            "add_scalar": lambda: np.add(x, s, out=z),
            "axpby": lambda: (
                np.multiply(x, a, out=z),
                np.multiply(y, b, out=w),
                np.add(z, w, out=z),
            ),
        }
    tx, ty, tz = torch.from_numpy(x), torch.from_numpy(y), torch.from_numpy(z)
    return {
        "copy": lambda: tz.copy_(tx),
        "scale": lambda: torch.mul(tx, SCALAR, out=tz),
        "add": lambda: torch.add(tx, ty, out=tz),
        "triad": lambda: torch.add(tx, ty, alpha=SCALAR, out=tz),
        "dot": lambda: torch.dot(tx, ty),
        "add_scalar": lambda: torch.add(tx, SCALAR, out=tz),
        # eager PyTorch has no one-call axpby: scale x into z, then add b·y in place (two passes).
        "axpby": lambda: torch.mul(tx, AXPBY_A, out=tz).add_(ty, alpha=AXPBY_B),
    }


def elementwise_cases(lib, np, torch, sizes, repetitions, min_time, wanted):
    """wanted(name, size label): whether to measure that case (arrays are made only for sizes with one)."""
    for n in sizes:
        if not any(wanted(f"compute/{op}/fp32", count_label(n)) for op in ELEMENTWISE_ARRAYS):
            continue
        x = np.full(n, 0.1, np.float32)
        y = np.full(n, 0.2, np.float32)
        z = np.zeros(n, np.float32)
        w = np.zeros(n, np.float32)
        expected = {
            "copy": 0.1,
            "scale": SCALAR * 0.1,
            "add": 0.3,
            "triad": 0.1 + SCALAR * 0.2,
            "add_scalar": 0.1 + SCALAR,
            "axpby": AXPBY_A * 0.1 + AXPBY_B * 0.2,
        }
        for op, step in elementwise_ops(lib, np, torch, x, y, z, w).items():
            if not wanted(f"compute/{op}/fp32", count_label(n)):
                continue
            got = step()
            if op == "dot":
                ok = abs(float(got) - 0.02 * n) <= 1e-3 * 0.02 * n
            else:
                ok = bool(np.allclose(z[[0, n // 2, n - 1]], expected[op], rtol=1e-6))
            samples = time_case(step, repetitions, min_time)
            nbytes = ELEMENTWISE_ARRAYS[op] * n * 4
            fields = {
                "family": "compute",
                "op": op,
                "precision": "fp32",
                "elements": n,
                "arrays_moved": ELEMENTWISE_ARRAYS[op],
                "bytes": nbytes,
                "bytes_counted": "babelstream",
                "compare_group": f"compute/{op}/fp32",
                "sweep": "elements",
                "validated": ok,
            }
            if not ok:
                fields["invalid_reason"] = "output differs from the expected constant"
            yield (
                f"compute/{op}/fp32",
                count_label(n),
                fields,
                samples,
                {"bytes_per_second": nbytes},
            )


# ---- one thread count, in its own process (the thread pools are sized before the first call) ----


def library_versions(np, torch):
    config = torch.__config__.show()
    blas = re.search(r"BLAS_INFO=(\w+)", config)
    return {
        "pytorch": f"PyTorch {torch.__version__} eager ({'MKL' if torch.backends.mkl.is_available() else blas and blas.group(1)}"
        f"{', oneDNN' if torch.backends.mkldnn.is_available() else ''})",
        "numpy": f"numpy {np.__version__} ({np.show_config(mode='dicts')['Build Dependencies']['blas']['name']})",
    }


def measure_threads(args, threads):
    import numpy as np
    import torch

    torch.set_num_threads(threads)
    libraries = library_versions(np, torch)
    view = "cpu_1t" if threads == 1 else "cpu_all"
    threading = {
        "pytorch": f"torch.set_num_threads({threads}) (OpenMP)",
        "numpy": f"OPENBLAS_NUM_THREADS={threads}",
    }
    rows = []

    def add(lib, name, size_or_none, fields, samples, per_step):
        full = f"{name}/{view}/{lib}" if size_or_none is None else f"{name}/{view}/{size_or_none}"
        base = dict(
            fields,
            view=view,
            series=lib,
            device="cpu",
            cpu_threads=threads,
            library=libraries[lib],
            threading=threading[lib],
        )
        rows.append({"name": full, "base": base, "samples": samples, "per_step": per_step})

    batches = args.batches
    if "mlp" in args.suite:
        for model_name in args.models:
            for variant in ("inference", "train_sgd", "train_adamw"):
                for batch in batches:
                    if not re.search(args.filter, f"mlp/{model_name}/{variant}/b{batch}/{view}"):
                        continue
                    name, fields, samples, per = mlp_case(
                        torch, model_name, batch, variant, args.repetitions, args.min_time
                    )
                    add("pytorch", name, None, fields, samples, per)
    if "compute" in args.suite:
        for group, m, n, k, sweep in sgemm_cases(args.square, batches):
            for lib in ("pytorch", "numpy"):
                size = str(n) if sweep == "n" else f"batch:{m}"
                if not re.search(args.filter, f"compute/sgemm/{group}/{lib}/{view}/{size}"):
                    continue
                prefix, size, fields, samples, per = sgemm_case(
                    lib, np, torch, group, m, n, k, sweep, args.repetitions, args.min_time
                )
                add(lib, f"{prefix}", size, fields, samples, per)
        for lib in ("numpy", "pytorch"):

            def wanted(prefix, size, lib=lib):
                return re.search(args.filter, f"{prefix}/{lib}/{view}/{size}") is not None

            for prefix, size, fields, samples, per in elementwise_cases(
                lib, np, torch, args.elements, args.repetitions, args.min_time, wanted
            ):
                add(lib, f"{prefix}/{lib}", size, fields, samples, per)
    return rows


def aggregate_of(name, values):
    mean = statistics.mean(values)
    stddev = statistics.stdev(values) if len(values) > 1 else 0.0
    return {
        "mean": mean,
        "median": statistics.median(values),
        "stddev": stddev,
        "cv": stddev / mean if mean > 0 else 0.0,
    }[name]


def to_benchmark_rows(measured, repetitions):
    """Google Benchmark's row layout: one row per repetition, then mean/median/stddev/cv aggregates."""
    out = []
    for family_index, m in enumerate(measured):
        name = m["name"] + "/real_time"
        common = dict(
            m["base"],
            name=name,
            run_name=name,
            family_index=family_index,
            per_family_instance_index=0,
            repetitions=repetitions,
            threads=1,
            time_unit="us",
            skipped=False,
        )
        times = [s[0] for s in m["samples"]]
        for index, (seconds, calls, cpu_seconds) in enumerate(m["samples"]):
            row = dict(
                common,
                run_type="iteration",
                repetition_index=index,
                iterations=calls,
                real_time=seconds * 1e6,
                cpu_time=cpu_seconds * 1e6,
                host_time_s=seconds,
            )
            for key, per_step in m["per_step"].items():
                row[key] = per_step / seconds
            out.append(row)
        cpu_times = [s[2] for s in m["samples"]]
        for aggregate in ("mean", "median", "stddev", "cv"):
            wall, cpu = (aggregate_of(aggregate, values) for values in (times, cpu_times))
            scale = 1 if aggregate == "cv" else 1e6
            row = dict(
                common,
                name=f"{name}_{aggregate}",
                run_type="aggregate",
                aggregate_name=aggregate,
                aggregate_unit="percentage" if aggregate == "cv" else "time",
                iterations=len(times),
                real_time=wall * scale,
                cpu_time=cpu * scale,
            )
            out.append(row)
    return out


def offloadbench_context(binary):
    """The host, cuda and machine_fingerprint blocks from `offloadbench info --json`, so compare accepts the
    file beside one of offloadbench's from this machine."""
    try:
        info = json.loads(
            subprocess.run(
                [binary, "info", "--json"], capture_output=True, text=True, check=True
            ).stdout
        )
    except (OSError, subprocess.CalledProcessError, json.JSONDecodeError) as e:
        sys.exit(
            f"cpu-anchors: cannot read the machine description from '{binary} info --json': {e}"
        )
    return info


def median_times(rows):
    """{(compare_group, view, size): median seconds} of the median aggregate rows with the given series."""
    out = {}
    for r in rows:
        if (
            r.get("run_type") == "aggregate"
            and r.get("aggregate_name") == "median"
            and r.get("real_time") is not None
        ):
            size = r.get("batch") if r.get("sweep") == "batch" else r.get(r.get("sweep", ""), None)
            unit = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[r.get("time_unit", "ns")]
            out.setdefault(r.get("series", ""), {})[
                (r.get("compare_group"), r.get("view"), size)
            ] = r["real_time"] * unit
    return out


def merge_into(ours_path, anchor_rows):
    """offloadbench's file with the anchor rows appended (its context kept, its analysis dropped: analyze and
    plot recompute it), and a table of offloadbench's median time ÷ each anchor's on the shared cases."""
    try:
        with open(ours_path) as f:
            ours = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        print(f"cpu-anchors: cannot read --merge file '{ours_path}': {e}", file=sys.stderr)
        sys.exit(2)
    ours.pop("analysis", None)
    offset = 1 + max((r.get("family_index", 0) for r in ours["benchmarks"]), default=-1)
    for r in anchor_rows:
        ours["benchmarks"].append(dict(r, family_index=r["family_index"] + offset))
    by_series = median_times(ours["benchmarks"])
    mine = by_series.get("", {})
    lines = []
    for series in ("pytorch", "numpy"):
        for key, theirs in sorted(by_series.get(series, {}).items(), key=lambda kv: str(kv[0])):
            if key in mine:
                group, view, size = key
                lines.append(
                    f"{group!s:34} {view!s:8} {size!s:>7}  ours {mine[key] * 1e6:10.1f} us  {series} "
                    f"{theirs * 1e6:10.1f} us  {series}/ours {theirs / mine[key]:5.2f}x"
                )
    return ours, lines


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument(
        "--offloadbench",
        required=True,
        help="the offloadbench binary (for the machine description)",
    )
    p.add_argument("--suite", default="mlp,compute")
    p.add_argument(
        "--full", action="store_true", help="every batch 1..4096 (default: 1, 64, 1024, 4096)"
    )
    p.add_argument("--threads", default="1,all", help="thread counts: 1, all, or numbers")
    p.add_argument("--repetitions", type=int, default=5)
    p.add_argument("--min-time", type=float, default=0.1, help="seconds per repetition, at least")
    p.add_argument("--filter", default="", help="regular expression on the case name")
    p.add_argument(
        "--merge",
        help="an offloadbench results file from this machine: write it with the anchor rows "
        "added, and print offloadbench's time beside each anchor's",
    )
    p.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.repetitions < 1 or args.min_time <= 0:
        print("cpu-anchors: --repetitions must be >= 1 and --min-time > 0", file=sys.stderr)
        sys.exit(2)
    args.suite = args.suite.split(",")
    args.batches = [1 << i for i in range(13)] if args.full else ISSUE_BATCHES
    args.models = list(SHAPES)
    args.square = SQUARE_SIZES
    args.elements = ELEMENTWISE_SIZES
    if args.child:
        json.dump(measure_threads(args, args.child), sys.stdout)
        return
    if args.merge and not os.path.isfile(args.merge):
        print(f"cpu-anchors: --merge file '{args.merge}' does not exist", file=sys.stderr)
        sys.exit(2)
    all_threads = os.cpu_count() or 1
    counts = sorted({all_threads if t == "all" else int(t) for t in args.threads.split(",")})
    measured = []
    for threads in counts:
        env = dict(
            os.environ,
            OMP_NUM_THREADS=str(threads),
            OPENBLAS_NUM_THREADS=str(threads),
            MKL_NUM_THREADS=str(threads),
        )
        argv = [sys.executable, __file__, *sys.argv[1:], "--child", str(threads)]
        proc = subprocess.run(argv, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            sys.exit(f"cpu-anchors: the {threads}-thread measurement failed:\n{proc.stderr}")
        measured += json.loads(proc.stdout)
    info = offloadbench_context(args.offloadbench)
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    context = {
        "date": now,
        "host_name": platform.node(),
        "executable": __file__,
        "num_cpus": all_threads,
        "mhz_per_cpu": 0,
        "cpu_scaling_enabled": False,
        "caches": [],
        "load_avg": list(os.getloadavg()),
        "library_build_type": "release",
        "offloadbench": {
            "schema_version": 1,
            "version": "cpu-anchors",
            "git_sha": "",
            "build_type": "",
            "suites": args.suite,
            "mode": "full" if args.full else "quick",
            "repetitions": args.repetitions,
            "devices": [],
            "command_line": " ".join(sys.argv),
            "start_time_utc": now,
            "end_time_utc": now,
            "incomplete": False,
        },
        "host": info["host"],
        "cuda": info["cuda"],
        "machine_fingerprint": info["machine_fingerprint"],
    }
    doc = {"context": context, "benchmarks": to_benchmark_rows(measured, args.repetitions)}
    if args.merge:
        doc, table = merge_into(args.merge, doc["benchmarks"])
        if (
            doc["context"].get("machine_fingerprint", {}).get("id")
            != info["machine_fingerprint"]["id"]
        ):
            print(
                f"cpu-anchors: {args.merge} comes from another machine (fingerprint differs)",
                file=sys.stderr,
            )
            sys.exit(2)
        print("\n".join(table))
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, args.out)
    print(f"cpu-anchors: {len(measured)} cases -> {args.out}")


if __name__ == "__main__":
    main()
