#!/usr/bin/env python3
"""Writes the constructed GPU sample series of telemetry/testdata/.

No GPU was available where these were made, so the GPU series are built to
the shape NVML reports (utilization in whole percent, memory in MiB, power in
W) with the counters a job of that kind accumulates; the CPU-only series
(cpu_busy.csv, cpu_sleep.csv) are recorded from real processes with
`meridian telemetry sample -o csv`. Run from this folder: python3 make_series.py
"""
import random

HEADER = ("t_s,cpu_user_s,cpu_system_s,iowait_s,run_delay_s,ctx_vol,ctx_invol,read_bytes,"
          "write_bytes,threads,vcpus,gpu,mig_gi,sm_pct,membw_pct,mem_used_mib,mem_total_mib,"
          "power_w,job_mem_mib")


def fmt(v):
    if v is None:
        return ""
    if isinstance(v, float):
        return ("%.3f" % v).rstrip("0").rstrip(".")
    return str(v)


def series(name, comment, n, step, per_s, gpus, vcpus=8, threads=12, skip=(), seed=1):
    """per_s: CPU user, system, iowait, run delay, vol cs, invol cs, read B, write B per second.
    gpus(i) -> list of (gpu, mig_gi, sm, bw, used, total, power, job_mem)."""
    rnd = random.Random(seed)
    tot = [0.0] * 8
    lines = ["# " + c for c in comment.split("\n")] + [HEADER]
    t = 1700000000.0
    for i in range(n):
        if i > 0:
            for k in range(8):
                tot[k] += per_s[k] * step * (0.95 + 0.1 * rnd.random())
        if i not in skip:
            head = [t, tot[0], tot[1], tot[2], tot[3], int(tot[4]), int(tot[5]), int(tot[6]),
                    int(tot[7]), threads, vcpus]
            rows = gpus(i) or [None]
            for g in rows:
                cells = head + (list(g) if g else [None] * 8)
                lines.append(",".join(fmt(c) for c in cells))
        t += step
    with open(name, "w") as f:
        f.write("\n".join(lines) + "\n")


H100 = 81559.0


def whole(sm, bw, used=30000.0, power=600.0):
    return lambda i: [(0, None, sm(i), bw(i), used, H100, power, used)]


series("healthy.csv", "A training loop that keeps its H100 busy: SM 93-97%, 1.2 of 8 vCPUs.",
       13, 5, [1.1, 0.1, 0, 0.01, 200, 20, 2e6, 1e5, 0, 0],
       whole(lambda i: 93 + i % 5, lambda i: 38 + i % 3))
series("input_bound_cpu.csv",
       "GPU 18-24% busy while the 4 allocated vCPUs are saturated (the loader decodes JPEGs).",
       13, 5, [3.6, 0.3, 0, 0.4, 900, 1500, 5e6, 1e5, 0, 0],
       whole(lambda i: 18 + (i * 7) % 7, lambda i: 9 + i % 2, used=12000.0, power=180.0),
       vcpus=4, threads=9)
series("input_bound_io.csv",
       "GPU 12-16% busy, CPUs mostly idle, the loader's reads wait on the network disk.",
       13, 5, [0.45, 0.15, 0.7, 0.01, 3000, 40, 240e6, 1e5, 0, 0],
       whole(lambda i: 12 + i % 5, lambda i: 5, used=12000.0, power=150.0))
series("memory_bound.csv",
       "Memory bandwidth 90-94% busy while SMs are 52-58% (an embedding-heavy model).",
       13, 5, [1.0, 0.1, 0, 0.01, 200, 20, 1e6, 1e5, 0, 0],
       whole(lambda i: 52 + i % 7, lambda i: 90 + i % 5, used=70000.0, power=520.0))
series("idle.csv", "A job stuck on a lock: GPU 0%, CPU 0.01 cores, no I/O.",
       13, 5, [0.005, 0.005, 0, 0, 1, 0, 0, 0, 0, 0],
       whole(lambda i: 0, lambda i: 0, used=18000.0, power=70.0))
series("underused.csv",
       "A small model on a whole H100: SM 20-24%, 6 GiB, CPUs not saturated: MIG slice.",
       13, 5, [1.0, 0.1, 0, 0.01, 300, 20, 1e6, 1e5, 0, 0],
       whole(lambda i: 20 + i % 5, lambda i: 8, used=6000.0, power=160.0))
series("burst_dip.csv", "A busy job with one 0% sample (an evaluation pause): still healthy.",
       13, 5, [1.1, 0.1, 0, 0.01, 200, 20, 2e6, 1e5, 0, 0],
       whole(lambda i: 0 if i == 6 else 95, lambda i: 0 if i == 6 else 40))
series("burst_spike.csv", "A stuck job with one 100% sample (a watchdog kernel): still idle.",
       13, 5, [0.005, 0.005, 0, 0, 1, 0, 0, 0, 0, 0],
       whole(lambda i: 100 if i == 6 else 0, lambda i: 0, used=18000.0, power=70.0))
series("missing_samples.csv",
       "Input-bound, with samples 4-9 missing (a 35 s gap) and GPU figures unknown in two samples.",
       16, 5, [3.6, 0.3, 0, 0.4, 900, 1500, 5e6, 1e5, 0, 0],
       lambda i: [(0, None, None if i in (11, 12) else 20, None if i in (11, 12) else 9,
                   12000.0, H100, 180.0, 12000.0)],
       vcpus=4, threads=9, skip=range(4, 10))
series("too_few.csv", "Two samples: not enough to classify.", 2, 5,
       [1.0, 0.1, 0, 0, 10, 1, 0, 0, 0, 0], whole(lambda i: 95, lambda i: 40))
series("mig_instances.csv",
       "Two MIG 3g.40gb instances of GPU 0: instance 1 runs another job at 90%;\n"
       "instance 2 holds this job (its processes' memory) and is 4% busy while its 2 vCPUs are saturated.",
       13, 5, [1.8, 0.15, 0, 0.2, 500, 900, 3e6, 1e5, 0, 0],
       lambda i: [(0, 1, 90, 45, 30000.0, 40320.0, None, 0.0),
                  (0, 2, 4, 2, 9000.0, 40320.0, None, 9000.0)],
       vcpus=2, threads=5)
series("mig_no_util.csv",
       "A MIG instance whose driver reports no utilization: classified from CPU and I/O alone.",
       13, 5, [1.9, 0.1, 0, 0.01, 300, 30, 1e6, 1e5, 0, 0],
       lambda i: [(0, 2, None, None, 9000.0, 40320.0, None, 9000.0)], vcpus=2, threads=4)
