#!/usr/bin/env python3
"""Writes cpu-profiles.jsonl: a two-day training trace whose jobs carry a CPU
profile (docs/telemetry.md, "The effect in replays"), for the fleet in
examples/fleets/cpu-tight.yaml. Deterministic (seed 7). Run from this folder.

The job mix is illustrative, not measured: three kinds of input pipeline,
with the figures a telemetry sample would give at 8 vCPUs per GPU --
  image   JPEG decode and augmentation on the CPU: the GPU waits 20-50% of a
          step (input_bound_fraction), the loader all CPU work (sensitivity 0.9)
  text    pre-tokenized shards: the GPU never waits, the loader's time does
          not grow or shrink with cores (0, 0)
  remote  reads from remote storage: the GPU waits 30%, cores do not help (0.3, 0)
"""
import json
import random

rnd = random.Random(7)
lines = []
t = 0
for i in range(300):
    t += int(rnd.expovariate(1 / 1500.0))  # one job every 25 minutes on average
    kind = rnd.choices(["image", "text", "remote"], weights=[4, 4, 2])[0]
    gpus = rnd.choice([1, 1, 2, 4, 4, 8])
    job = {"name": "%s-%03d" % (kind, i), "submit_s": t,
           "duration_s": int(rnd.uniform(1, 8) * 3600),
           "gpus": gpus, "gpu_model": "A100-80GB", "tenant": "t%d" % (i % 3),
           "kind": "training"}
    if kind == "image":
        job["input_bound_fraction"] = round(rnd.uniform(0.2, 0.5), 2)
        job["cpu_sensitivity"] = 0.9
    elif kind == "text":
        job["input_bound_fraction"] = 0.0
        job["cpu_sensitivity"] = 0.0
    else:
        job["input_bound_fraction"] = 0.3
        job["cpu_sensitivity"] = 0.0
    lines.append(json.dumps(job))
with open("cpu-profiles.jsonl", "w") as f:
    f.write("\n".join(lines) + "\n")
