#!/usr/bin/env python3
"""The cost model against Megatron-LM's comparison with ZeRO-3 (Narayanan
et al., SC'21, Table 2; ../shared/reference/megatron-sc21.md): GPT-3 175B
(hidden 12288, 96 heads, 96 layers, sequence 2048, global batch 1536), one
mixed-precision training step as in megatron_table.py, searched on
`dgx-a100-8x<GPUs/8>` for 384, 768 and 1536 GPUs twice: on a 1-D mesh of
all GPUs (no model parallelism: the search may only split tensors over
data-parallel ranks, as ZeRO-3 does) and on the cluster's [nodes, 8] mesh
(model parallelism allowed). Printed per GPU count: each plan's predicted
per-GPU TFLOP/s (the paper's FLOP count over the predicted step) beside the
paper's measured ZeRO-3 and PTD-P (t = 8, p = 12) figures.

Usage: bench/train/zero3_table.py [--build build] [--time-limit 120]
       [--keep DIR]
"""

import os

from megatron_table import describe, flops, make_step, parse_options, search

HIDDEN, HEADS, LAYERS, BATCH = 12288, 96, 96, 1536
# GPUs, ZeRO-3 and PTD-P TFLOP/s per GPU measured (Table 2).
ROWS = [(384, 144, 153), (768, 88, 149), (1536, 44, 141)]


def gathered(entry):
    """How many of the plan's matmuls read whole weights that are stored
    split (ZeRO-3's gather before use): "", "some " or "all ". Vectors
    (biases, LayerNorm's parameters) may stay whole: some parameter
    stored split is enough."""
    if not any("S(" in a["layout"] for a in entry["arguments"]
               if a["role"] == "parameter"):
        return ""
    # A matmul's second operand is its weight, replicated when gathered.
    weights = [op["signature"].split("], [", 1)[1].split("]", 1)[0]
               for op in entry["ops"] if op["op"] == "linalg.matmul"]
    whole = ["S(" not in w and "P(" not in w for w in weights]
    return "all " if all(whole) else "some " if any(whole) else ""


def main():
    opts, opt, work = parse_options(__doc__, "zero3")
    step = make_step(opt, work, "gpt175b", HIDDEN, HEADS, BATCH, LAYERS,
                     opts.dropout)
    total = flops(BATCH, LAYERS, HIDDEN)
    print("| GPUs | 1-D mesh: search's plan | TFLOP/s per GPU (ZeRO-3 "
          "measured) | [nodes, 8] mesh: search's plan | TFLOP/s per GPU "
          "(PTD-P measured) | sbp-opt s |")
    print("|---:|---|---:|---|---:|---:|")
    for gpus, zero3, ptdp in ROWS:
        cluster = f"dgx-a100-8x{gpus // 8}"
        cells, seconds = [], 0
        for mesh, paper in ((str(gpus), zero3), ("", ptdp)):
            name = f"{gpus}-{'1d' if mesh else '2d'}.json"
            entry, more, error = search(opt, step, cluster, mesh,
                                        os.path.join(work, name),
                                        opts.time_limit)
            seconds += more
            if not entry:
                cells += [f"none: {' '.join(error)}", f"- ({paper})"]
                continue
            tflops = total / gpus / entry["plan"]["step_time_s"] / 1e12
            kind = gathered(entry)
            cells += [describe(entry) +
                      (f" ({kind}weights gathered before use)" if kind
                       else ""),
                      f"{tflops:.0f} ({paper}; {tflops / paper:.2f})"]
        print(f"| {gpus} | {' | '.join(cells)} | {seconds:.0f} |",
              flush=True)


if __name__ == "__main__":
    main()
