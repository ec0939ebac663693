#!/usr/bin/env python3
"""Prints docs/estimator.md's calibration ratios (section 5a) from `plan`.

    python3 estimate/testdata/calibration/ratios.py [--meridian build/meridian]
        [--matmul-efficiency A100-80GB=0.648 ...]

Each run is planned from its spec in this folder; the ratio is the published
rate over meridian's rate on the count its source uses (meridian's run time
over the published one). The published figures and their sources are the
table's in docs/estimator.md and each spec's header comment.

Each row also prints the efficiency the plan ran the matmuls at: the
catalog's best-shape figure x h / (h + h0) for the model's hidden size h
(section 3). --whole-model-efficiency first prints how each GPU's h0 is worked
out from the efficiency a whole model reached on one GPU (WHOLE_MODEL below),
for comparison with gpus.csv's matmul_half_width (tools/build_catalog.py
derives it from tools/catalog_matmul_width.csv).

--matmul-efficiency plans against a copy of data/catalog whose gpus.csv gives
that GPU model that best-shape matmul efficiency instead (a what-if).
"""
import argparse
import csv
import io
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CATALOG = HERE.parents[2] / "data" / "catalog"

# (spec, published figure, count, vocabulary for Megatron's count)
RUNS = [
    ("llama-65b", 380, "tokens/s/GPU", None),
    ("opt-175b", 147, "PaLM", None),
    ("bloom-176b", 156, "Megatron", 250880),
    ("bloom-176b", 156, "PaLM", None),
    ("megatron-1t", 163, "Megatron", 51200),
    ("llama3-405b", 430, "PaLM", None),
    ("llama3-405b", 430, "6PT", None),
    ("mpt-7b-h100", 10643, "tokens/s/GPU", None),
    ("mpt-7b-a100", 4641, "tokens/s/GPU", None),
    ("trtllm-llama-7b-h100", 6818, "tokens/s/GPU", None),
]


# GPT3-2.7B trained with FlashAttention 2 on one GPU, no communication
# (LambdaLabsML/examples, flash-attention-2/README.md, commit
# 1884943455184be70dd73109f6cd81cf613b156a; its config, LambdaLabsML/flash-attention
# training/configs/experiment/owt/gpt3-2.7B-flash.yaml, commit
# 81796d3560c52f78019704474eff71f05d1828a0: 32 layers, d_model 2560, 32 heads,
# 2048 tokens, batch 4, no MLP checkpointing; vocabulary 50,257 padded to 50,264).
# Tokens/s on one GPU, and the GPU's dense bf16 peak (TFLOPS) and HBM (GB/s) as
# data/catalog/gpus.csv has them. Parameters: 32 x 12 x 2560^2 = 2.517e9 in the
# layers + 50,264 x 2560 = 0.129e9 in the tied embedding + 2048 x 2560 positions
# and the norms' and biases' few million = 2.65e9.
WHOLE_MODEL = {"A100-80GB": (10649.6, 312, 2000), "H100-80GB": (22282.24, 989, 3350)}
GPT3_2_7B = {"params": 2.65e9, "layers": 32, "hidden": 2560, "seq_len": 2048}


def whole_model_efficiency(tokens_per_s, peak_tflops, hbm_gbps):
    """The matmuls' fraction of peak in a measured run: model FLOPs 6P + 12Lsh a
    token (section 3), less the time meridian charges the element-wise kernels,
    (22 + 88/3) x L x h x 2 B a token over HBM x 0.80 (ElementwiseBytesPerToken,
    estimate/defaults.h)."""
    m = GPT3_2_7B
    flops = 6 * m["params"] + 12 * m["layers"] * m["seq_len"] * m["hidden"]
    mfu = tokens_per_s * flops / (peak_tflops * 1e12)
    bytes_per_token = (22 + 88 / 3) * m["layers"] * m["hidden"] * 2
    elementwise = tokens_per_s * bytes_per_token / (hbm_gbps * 1e9 * 0.80)
    return mfu, elementwise, mfu / (1 - elementwise)


def catalog_best(gpu):
    """data/catalog/gpus.csv's best-shape matmul_efficiency of `gpu`."""
    lines = (CATALOG / "gpus.csv").read_text().splitlines()
    rows = csv.DictReader(line for line in lines if not line.startswith("#"))
    return next(float(row["matmul_efficiency"]) for row in rows if row["name"] == gpu)


def half_efficiency_hidden(measured, best):
    """h0 such that best x h / (h + h0) is the measured efficiency at the
    measured model's hidden size: h0 = h x (best / measured - 1)."""
    return GPT3_2_7B["hidden"] * (best / measured - 1)


def spec_numbers(spec):
    """The spec's numeric fields by name (params_b, layers, hidden, seq_len,
    tokens): each appears once in these specs."""
    text = (HERE / f"{spec}.yaml").read_text()
    fields = re.findall(r"^\s+(\w+): ([0-9.eE+-]+)\s*(?:#.*)?$", text, re.M)
    return {name: float(value) for name, value in fields}


def fail(message):
    print(f"ratios.py: {message}", file=sys.stderr)
    sys.exit(2)


def plan(meridian, catalog, spec):
    command = [meridian] + (["--catalog", str(catalog)] if catalog else [])
    command += ["plan", str(HERE / f"{spec}.yaml"), "-o", "json"]
    try:
        done = subprocess.run(command, capture_output=True, text=True)
    except OSError as e:
        fail(f"--meridian: cannot run {meridian!r}: {e.strerror} "
             "(build it: ninja -C build meridian)")
    if done.returncode != 0:
        fail(f"{' '.join(command)} exited {done.returncode}: {done.stderr.strip()}")
    return spec_numbers(spec), json.loads(done.stdout)["estimates"][0]


def catalog_with(efficiencies, folder):
    """A copy of data/catalog in `folder` with gpus.csv's matmul_efficiency
    replaced for the named models ({"A100-80GB": 0.648})."""
    shutil.copytree(CATALOG, folder, dirs_exist_ok=True)
    lines = (CATALOG / "gpus.csv").read_text().splitlines(keepends=True)
    comments = [line for line in lines if line.startswith("#")]
    rows = list(csv.DictReader(line for line in lines if not line.startswith("#")))
    unknown = set(efficiencies) - {row["name"] for row in rows}
    if unknown:
        fail(f"--matmul-efficiency: {', '.join(sorted(unknown))} is not a GPU model "
             "of data/catalog/gpus.csv")
    for row in rows:
        if row["name"] in efficiencies:
            row["matmul_efficiency"] = efficiencies[row["name"]]
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    (Path(folder) / "gpus.csv").write_text("".join(comments) + out.getvalue())
    return folder


def megatron_flops_per_token(spec, vocab):
    # Narayanan et al. 2021, eq. 3: 96 L h^2 (1 + s/6h + V/16Lh) = 96Lh^2 + 16Lsh + 6Vh.
    layers, hidden, seq = spec["layers"], spec["hidden"], spec["seq_len"]
    return 96 * layers * hidden**2 + 16 * layers * seq * hidden + 6 * vocab * hidden


def meridian_rate(spec, estimate, count, vocab):
    t = estimate["throughput"]
    gpu_seconds = estimate["memory"]["gpus"] * t["run_hours"] * 3600
    tokens = spec["tokens"]
    if count == "tokens/s/GPU":
        return tokens / gpu_seconds
    if count == "PaLM":
        return t["mfu"] * t["peak_tflops_per_gpu"]
    if count == "6PT":
        return 6 * spec["params_b"] * 1e9 * tokens / gpu_seconds / 1e12
    return megatron_flops_per_token(spec, vocab) * tokens / gpu_seconds / 1e12


def efficiency_arg(text):
    name, _, value = text.partition("=")
    try:
        number = float(value)
    except ValueError:
        number = 0
    if not name or not 0 < number <= 1:
        raise argparse.ArgumentTypeError(f"{text!r}: want GPU=VALUE with VALUE in (0, 1]")
    return name, value


def print_ratios(meridian, catalog):
    lines = [f"{'run':22} {'count':13} {'efficiency':>10} {'published':>10} {'meridian':>10} "
             f"{'ratio':>6}"]
    for spec, published, count, vocab in RUNS:
        numbers, estimate = plan(meridian, catalog, spec)
        rate = meridian_rate(numbers, estimate, count, vocab)
        ratio = published / rate
        efficiency = estimate["throughput"]["efficiency"]
        lines.append(f"{spec:22} {count:13} {efficiency:10.3f} {published:10.1f} {rate:10.1f} "
                     f"{ratio:6.2f}")
    print("\n".join(lines))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--meridian", default="build/meridian")
    parser.add_argument("--matmul-efficiency", type=efficiency_arg, action="append", default=[])
    parser.add_argument("--whole-model-efficiency", action="store_true")
    args = parser.parse_args()
    if args.whole_model_efficiency:
        for gpu, measured in WHOLE_MODEL.items():
            mfu, elementwise, efficiency = whole_model_efficiency(*measured)
            best = catalog_best(gpu)
            print(f"{gpu}: {measured[0]} tokens/s = {100 * mfu:.1f}% MFU; element-wise "
                  f"{100 * elementwise:.1f}% of the time; matmuls {efficiency:.5f} of peak; "
                  f"h0 = {GPT3_2_7B['hidden']} x ({best} / {efficiency:.5f} - 1) = "
                  f"{half_efficiency_hidden(efficiency, best):.0f}")
    if not args.matmul_efficiency:
        print_ratios(args.meridian, None)
        return
    with tempfile.TemporaryDirectory() as folder:
        print_ratios(args.meridian, catalog_with(dict(args.matmul_efficiency), folder))


if __name__ == "__main__":
    main()
