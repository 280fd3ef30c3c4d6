"""PyTorch's CPU normalize of an image batch beside offloadbench's (the batches family's cpu_normalize
rows), interleaved: each round times PyTorch's expression and then runs offloadbench's case, for each
thread count, so both sides see the same machine state. Prints ms per batch and GB/s per side and
thread count: median over rounds and the min–max spread. Bytes are counted as offloadbench counts its
CPU rows: uint8 read + fp32 written, 5 bytes per element. Run through lab/tools/torch-normalize.

PyTorch's side, on x: uint8 [batch, H, W, C] (what a data loader decodes) and mean, std: fp32 [C]:
    ((x.float() / 255 - mean) / std).permute(0, 3, 1, 2).contiguous()      # -> fp32 [batch, C, H, W]
and, as a second PyTorch row, the same arithmetic into buffers made once (what a loader that keeps its
batch buffer could write: no allocation and no page faults per batch):
    tmp.copy_(x); tmp.sub_(mean * 255).div_(std * 255); out.copy_(tmp.permute(0, 3, 1, 2))
Each output is checked once against the formula in float64 before it is timed.
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

MEAN = {3: [0.485, 0.456, 0.406], 1: [0.5]}  # kernels/normalize_image.h's defaults
STD = {3: [0.229, 0.224, 0.225], 1: [0.25]}


def parse_image(text):
    try:
        h, w, c = (int(v) for v in text.split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not HxWxC, e.g. 224x224x3") from None
    if min(h, w) < 1 or c not in MEAN:
        raise argparse.ArgumentTypeError(f"{text!r}: sizes must be positive and C 1 or 3")
    return h, w, c


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def torch_sides(torch, image, batch):
    """{side name: step} for the expression as users write it and for the buffers-reused variant."""
    h, w, c = image
    g = torch.Generator().manual_seed(34)
    x = torch.randint(0, 256, (batch, h, w, c), dtype=torch.uint8, generator=g)
    mean, std = torch.tensor(MEAN[c]), torch.tensor(STD[c])
    tmp, out = torch.empty(batch, h, w, c), torch.empty(batch, c, h, w)

    def expression():
        return ((x.float() / 255 - mean) / std).permute(0, 3, 1, 2).contiguous()

    def reused():
        tmp.copy_(x)
        tmp.sub_(mean * 255).div_(std * 255)
        out.copy_(tmp.permute(0, 3, 1, 2))
        return out

    want = ((x.double() / 255 - mean.double()) / std.double()).permute(0, 3, 1, 2)
    for step in (expression, reused):
        error = (step().double() - want).abs().max().item()
        if not error < 1e-5:
            sys.exit(
                f"torch-normalize: PyTorch's {step.__name__} is off by {error} from the formula"
            )
    return {"PyTorch": expression, "PyTorch reuse": reused}


def time_torch(torch, step, threads, calls):
    torch.set_num_threads(threads)
    step()  # warm-up at this thread count
    samples = []
    for _ in range(calls):
        start = time.perf_counter()
        step()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def time_offloadbench(binary, image, batch, threads, calls):
    """Median seconds per batch over `calls` repetitions of offloadbench's cpu_normalize case."""
    label = "x".join(map(str, image))
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "ours.json")
        command = [
            binary,
            "run",
            "--suite",
            "batches",
            "--device",
            "cpu",
            "--full",
            "--repetitions",
            str(calls),
            "--out",
            out,
            "--",
            f"--benchmark_filter=^batches/{label}/cpu_normalize/threads:{threads}/batch:{batch}/",
        ]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"torch-normalize: {' '.join(command)} failed: {done.stderr.strip()[-400:]}")
        rows = [
            r
            for r in json.load(open(out))["benchmarks"]
            if r.get("run_type") == "iteration" and not r.get("skipped") and r.get("validated")
        ]
    if not rows:
        sys.exit(
            f"torch-normalize: offloadbench ran no case {label} threads:{threads} batch:{batch} "
            f"(threads must be 1 or this machine's OpenMP thread count)"
        )
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
    return statistics.median(r["real_time"] * scale[r.get("time_unit", "ns")] for r in rows)


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="lab/tools/torch-normalize", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--image", type=parse_image, default=(224, 224, 3), help="HxWxC (default 224x224x3)"
    )
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument(
        "--threads", default="1,all", help="comma-separated thread counts; all = every core"
    )
    parser.add_argument("--rounds", type=int, default=7, help="interleaved rounds (default 7)")
    parser.add_argument(
        "--calls", type=int, default=5, help="timed calls per side per round (median taken)"
    )
    parser.add_argument(
        "--offloadbench", help="offloadbench binary: time its case beside PyTorch's"
    )
    args = parser.parse_args(argv)
    if args.batch < 1 or args.rounds < 1 or args.calls < 1:
        parser.error("--batch, --rounds and --calls must be positive")
    import torch

    all_threads = os.cpu_count() or 1
    try:
        thread_counts = [all_threads if t == "all" else int(t) for t in args.threads.split(",")]
    except ValueError:
        parser.error(f"--threads {args.threads!r}: numbers or 'all'")
    sides = torch_sides(torch, args.image, args.batch)
    samples = {}
    for _ in range(args.rounds):
        for threads in thread_counts:
            for side, step in sides.items():
                samples.setdefault((side, threads), []).append(
                    time_torch(torch, step, threads, args.calls)
                )
            if args.offloadbench:
                samples.setdefault(("offloadbench", threads), []).append(
                    time_offloadbench(
                        args.offloadbench, args.image, args.batch, threads, args.calls
                    )
                )
    elements = args.image[0] * args.image[1] * args.image[2] * args.batch
    print(
        f"{'x'.join(map(str, args.image))} x batch {args.batch}, uint8 HWC -> fp32 CHW; {cpu_model()}, "
        f"{all_threads} CPUs; torch {torch.__version__}; {args.rounds} interleaved rounds x {args.calls} calls"
    )
    print(
        f"{'side':<14} {'threads':>7} {'ms median':>10} {'ms min-max':>16} {'GB/s median':>12} {'GB/s min-max':>14}"
    )
    for (side, threads), values in sorted(samples.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        med, lo, hi = statistics.median(values), min(values), max(values)
        rate = lambda s: 5 * elements / s / 1e9  # noqa: E731
        print(
            f"{side:<14} {threads:>7} {med * 1e3:>10.2f} {lo * 1e3:>7.2f}-{hi * 1e3:<8.2f} {rate(med):>12.2f} "
            f"{rate(hi):>6.2f}-{rate(lo):<7.2f}"
        )
    for threads in thread_counts:
        ours = samples.get(("offloadbench", threads))
        for side in sides:
            theirs = samples.get((side, threads))
            if ours and theirs:
                print(
                    f"threads {threads}: offloadbench {statistics.median(theirs) / statistics.median(ours):.2f}x "
                    f"the speed of {side} (medians over rounds)"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
