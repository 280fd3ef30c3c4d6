"""Writes peer_4gpu_synthetic.json: a SYNTHETIC results file of the peer suite on 4 GPUs (made-up
figures, no machine measured them) for the matrix and heatmap tests. GPUs 0-1 and 2-3 are NVLink
pairs (~180 GB/s), the other pairs PCIe (~25 GB/s), and 0<->3 has no peer access (skipped, "waived").
Run: python3 tests/data/make_peer_fixture.py"""

import json
import pathlib

HERE = pathlib.Path(__file__).resolve().parent
context = json.load(open(HERE / "quick_cpu_reps10.json"))["context"]
context["offloadbench"]["suites"] = ["peer"]
context["offloadbench"]["devices"] = "all"
context["offloadbench"]["command_line"] = ["synthetic fixture: tests/data/make_peer_fixture.py"]
GPUS = [0, 1, 2, 3]
WAIVED = {(0, 3), (3, 0)}
MIB512 = 512 << 20


def pair_rate(a, b):
    return 180e9 if {a, b} in ({0, 1}, {2, 3}) else 25e9


def row(name, fields, rep, value_field, value, skipped=None):
    r = dict(
        fields,
        name=name,
        run_name=name,
        run_type="iteration",
        repetitions=3,
        repetition_index=rep,
        threads=1,
        iterations=0 if skipped else 16,
        real_time=0 if skipped else 1.0,
        cpu_time=0,
        time_unit="ms",
        family="peer",
        skipped=bool(skipped),
        validated=not skipped,
    )
    if skipped:
        r["skip_reason"] = skipped
        r["error_message"] = "skipped: " + skipped
    else:
        r[value_field] = value * (1 + 0.01 * (rep - 1))  # a small spread over the repetitions
    return r


rows = []
testcases = [
    ("read", "one_way", "read", "device_to_device_memcpy_read_ce", 1),
    ("write", "one_way", "write", "device_to_device_memcpy_write_ce", 1),
    (
        "bidirectional_read",
        "bidirectional",
        "read",
        "device_to_device_bidirectional_memcpy_read_ce",
        2,
    ),
]
for name, pattern, access, nvb, factor in testcases:
    for a in GPUS:
        for b in GPUS:
            if a == b:
                continue
            fields = dict(
                op="peer",
                testcase=name,
                nvbandwidth=nvb,
                pattern=pattern,
                access=access,
                initiator="copy_engine",
                device=a,
                peer=b,
                gpus=GPUS,
                bytes=MIB512,
            )
            case = f"peer/{name}/ce/gpu:{a}/peer:{b}/512MiB/manual_time"
            reason = (
                "no peer-to-peer access from GPU {} to GPU {} (cudaDeviceCanAccessPeer = 0)".format(
                    a, b
                )
                if (a, b) in WAIVED
                else None
            )
            for rep in range(3):
                rows.append(
                    row(case, fields, rep, "bytes_per_second", factor * pair_rate(a, b), reason)
                )
for a in GPUS:
    fields = dict(
        op="peer",
        testcase="all_to_one_write",
        nvbandwidth="all_to_one_write_ce",
        pattern="all_to_one",
        access="write",
        initiator="copy_engine",
        device=a,
        gpus=GPUS,
        bytes=MIB512,
    )
    for rep in range(3):
        rows.append(
            row(
                f"peer/all_to_one_write/ce/gpu:{a}/512MiB/manual_time",
                fields,
                rep,
                "bytes_per_second",
                sum(pair_rate(o, a) for o in GPUS if o != a and (o, a) not in WAIVED),
            )
        )
for a in GPUS:
    for b in GPUS:
        if a == b:
            continue
        fields = dict(
            op="peer",
            testcase="latency",
            nvbandwidth="device_to_device_latency_sm",
            pattern="latency",
            access="none",
            initiator="sm",
            device=a,
            peer=b,
            gpus=GPUS,
            bytes=256 << 20,
        )
        for rep in range(3):
            rows.append(
                row(
                    f"peer/latency/sm/gpu:{a}/peer:{b}/manual_time",
                    fields,
                    rep,
                    "latency_ns",
                    800.0 if pair_rate(a, b) > 100e9 else 1900.0,
                    "no peer-to-peer access" if (a, b) in WAIVED else None,
                )
            )
json.dump(
    {"context": context, "benchmarks": rows}, open(HERE / "peer_4gpu_synthetic.json", "w"), indent=1
)
