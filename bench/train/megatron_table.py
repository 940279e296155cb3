#!/usr/bin/env python3
"""The cost model against Megatron-LM's weak-scaling table (Narayanan et
al., SC'21, Table 1; ../shared/reference/megatron-sc21.md): for each GPT of
the table, one mixed-precision training step (bf16 compute, f32 master
weights, gradients and AdamW state, as the paper's mixed precision keeps
16 bytes a parameter; GPT-2's block as Megatron-LM builds it: LayerNorm,
biased projections, the tanh GeLU, causal attention, learned positions,
dropout 0.1 where Megatron-LM drops out, its default;
cross-entropy over a 51,200-token
vocabulary, sequence 2048, the table's global batch; layers as one scf.for,
whose backward recomputes each layer from its input as Megatron's full
recomputation does) is searched by sbp-auto-parallel on the A100 preset of
the row's GPU count (`dgx-a100-8x<nodes>`, mesh [nodes, 8]). Printed per
row: the search's plan, its predicted step and per-GPU TFLOP/s (the paper's
FLOP count F = 96 B s l h^2 (1 + s/6h + V/16lh) over the predicted step),
beside the paper's configuration priced by the same model (data parallel
for t = 1; for t > 1 the "data x tensor parallel" reference on a
[GPUs/t, t] mesh) and the paper's measured TFLOP/s.

The search also runs with the paper's stage count and micro-batches of
one sequence per data-parallel group (`pipeline-stages=p
micro-batches=batch/d`: it chooses the cuts and every stage's layouts; for
p = 1 that is gradient accumulation), and the search's plan is the faster
of the two. For p = 1, when the paper's configuration does not fit 80 GiB
without stages, it is priced as Megatron-LM runs it: its layouts with the
gradients of batch/d micro-batches accumulated (the accumulation report's
"data x tensor parallel" reference). The paper's
configuration is then the pipeline report's "data x tensor parallel"
reference: the same p stages and micro-batches, l/p layers a stage (the
embedding in the first, the logits in the last), every stage in
Megatron-LM's layouts on its [d, t] mesh, priced by the same pipeline
model (1F1B simulated per micro-batch, sends of each device's shard).

Usage: bench/train/megatron_table.py [--build build] [--rows 1,2,3]
       [--time-limit 120] [--keep DIR] [--dropout 0.1]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# params (B), heads, hidden, layers, t, p, GPUs, batch, TFLOP/s per GPU.
ROWS = [
    (1.7, 24, 2304, 24, 1, 1, 32, 512, 137),
    (3.6, 32, 3072, 30, 2, 1, 64, 512, 138),
    (7.5, 32, 4096, 36, 4, 1, 128, 512, 142),
    (18.4, 48, 6144, 40, 8, 1, 256, 1024, 135),
    (39.1, 64, 8192, 48, 8, 2, 512, 1536, 138),
    (76.1, 80, 10240, 60, 8, 4, 1024, 1792, 140),
    (145.6, 96, 12288, 80, 8, 8, 1536, 2304, 148),
    (310.1, 128, 16384, 96, 8, 16, 1920, 2160, 155),
    (529.6, 128, 20480, 105, 8, 35, 2520, 2520, 163),
    (1008, 160, 25600, 128, 8, 64, 3072, 3072, 163),
]
SEQ, VOCAB = 2048, 51200


def flops(batch, layers, hidden):
    """The paper's FLOPs per iteration (with full recomputation)."""
    s, l, h, v = SEQ, layers, hidden, VOCAB
    return 96 * batch * s * l * h * h * (1 + s / (6 * h) + v / (16 * l * h))


def make_step(opt, work, name, hidden, heads, batch, layers, dropout=0.1):
    """Writes the GPT's mixed-precision training step into `work`; its
    path."""
    model = os.path.join(work, f"{name}.mlir")
    step = os.path.join(work, f"{name}-step.mlir")
    subprocess.run([sys.executable,
                    os.path.join(ROOT, "bench", "search", "gen_gpt.py"),
                    "--hidden", str(hidden), "--heads", str(heads),
                    "--batch", str(batch), "--seq", str(SEQ),
                    "--layers", str(layers), "--vocab", str(VOCAB),
                    "--dtype", "bf16", "--param-dtype", "f32", "--loop", "--gpt2",
                    "--dropout", str(dropout),
                    "-o", model], check=True)
    subprocess.run([opt, model, "--sbp-make-train-step", "-o", step],
                   check=True)
    return step


def run_search(opt, step, options, report):
    """Runs sbp-auto-parallel with `options`; its report, the seconds it
    took, and the error text when it failed."""
    start = time.time()
    run = subprocess.run([opt, step,
                          f"--sbp-auto-parallel={options} report={report}",
                          "-o", os.devnull], capture_output=True, text=True)
    seconds = time.time() - start
    if run.returncode:
        # The diagnostic's message, not the source line and caret after it.
        lines = run.stderr.strip().splitlines()
        errors = [line.split("error: ", 1)[1] for line in lines
                  if "error: " in line]
        return None, seconds, errors[-1:] or lines[-1:]
    with open(report) as f:
        return json.load(f), seconds, None


def search(opt, step, cluster, mesh, report, time_limit, limit=""):
    """Runs the search; the report's function entry, or the error text."""
    options = f"cluster={cluster} time-limit={time_limit}"
    if mesh:
        options += f" mesh={mesh}"
    if limit:
        options += f" memory-limit={limit}"
    found, seconds, error = run_search(opt, step, options, report)
    return (found["functions"][0] if found else None), seconds, error


def search_pipeline(opt, step, cluster, stages, micro_batches, report,
                    time_limit, limit="", mesh=""):
    """Runs the search for a pipeline of `stages` stages and
    `micro_batches` micro-batches (one stage: gradient accumulation); the
    report's pipeline entry, or the error text."""
    options = (f"cluster={cluster} time-limit={time_limit} "
               f"pipeline-stages={stages} micro-batches={micro_batches}")
    if mesh:
        options += f" mesh={mesh}"
    if limit:
        options += f" memory-limit={limit}"
    found, seconds, error = run_search(opt, step, options, report)
    return (found["pipeline"] if found else None), seconds, error


def describe_pipeline(pipeline, layers):
    """A pipeline plan in a few words: its stages' layers."""
    firsts = [s["first_op"] for s in pipeline["per_stage"]]
    mesh = "x".join(str(n) for n in pipeline["stage_mesh"])
    if pipeline["stages"] == 1:
        return (f"gradients accumulated over {pipeline['micro_batches']} "
                f"micro-batches on [{mesh}]")
    return (f"{pipeline['stages']} stages on [{mesh}], "
            f"{pipeline['micro_batches']} micro-batches, cut at units "
            f"{', '.join(str(f) for f in firsts[1:])} (of {layers} layers "
            f"and the embedding before them)")


def describe(entry):
    """The layouts of a row's attention and MLP weights and their first
    moment: the plan in a few words."""
    layouts = {a["name"]: a["layout"].split(", ", 1)[1].rstrip(">")
               for a in entry["arguments"]}
    # Arguments: tokens, embedding, the six stacked weights, logits weight.
    return (f"wq {layouts.get('arg2')}, w2 {layouts.get('arg7')}, "
            f"state {layouts.get('arg2.m')}")


def parse_options(doc, name, add=lambda parser: None):
    """The command line of a table script (`add` adds its own options):
    the options, the sbp-opt to run and the folder for models and
    reports."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--time-limit", type=float, default=120)
    parser.add_argument("--keep", help="keep models and reports here")
    parser.add_argument("--dropout", type=float, default=0.1,
                        help="the GPT's dropout (Megatron-LM's default)")
    add(parser)
    opts = parser.parse_args()
    work = opts.keep or tempfile.mkdtemp(prefix=f"sbp-{name}-")
    os.makedirs(work, exist_ok=True)
    return opts, os.path.join(opts.build, "bin", "sbp-opt"), work


def main():
    opts, opt, work = parse_options(
        __doc__, "megatron", lambda parser: parser.add_argument(
            "--rows", default=",".join(str(i + 1)
                                       for i in range(len(ROWS)))))
    print("| row | params (B) | GPUs | paper t, p | search's plan | step s | "
          "TFLOP/s per GPU | vs paper | paper's config priced, TFLOP/s "
          "(vs paper) | sbp-opt s, all runs |")
    print("|---|---:|---:|---|---|---:|---:|---:|---:|---:|")

    for index in [int(r) for r in opts.rows.split(",")]:
        params, heads, hidden, layers, t, p, gpus, batch, paper = \
            ROWS[index - 1]
        step = make_step(opt, work, f"row{index}", hidden, heads, batch,
                         layers, opts.dropout)
        cluster = f"dgx-a100-8x{gpus // 8}"
        total = flops(batch, layers, hidden)
        entry, seconds, error = search(
            opt, step, cluster, "",
            os.path.join(work, f"row{index}-plan.json"), opts.time_limit)
        # The search cut into the paper's number of stages (one: gradient
        # accumulation), with its micro-batches of one sequence per
        # data-parallel group.
        d = gpus // (t * p)
        pipeline, more, error = search_pipeline(
            opt, step, cluster, p, batch // d,
            os.path.join(work, f"row{index}-pipeline.json"),
            opts.time_limit)
        seconds += more
        if not pipeline:
            print(f"row {index}: no pipeline: {' '.join(error)}",
                  file=sys.stderr)
        if pipeline and (not entry or pipeline["step_time_s"] <
                         entry["plan"]["step_time_s"]):
            step_s = pipeline["step_time_s"]
            tflops = total / gpus / step_s / 1e12
            plan = (describe_pipeline(pipeline, layers), f"{step_s:.2f}",
                    f"{tflops:.0f}", f"{tflops / paper:.2f}")
        elif entry:
            step_s = entry["plan"]["step_time_s"]
            tflops = total / gpus / step_s / 1e12
            plan = (describe(entry), f"{step_s:.2f}", f"{tflops:.0f}",
                    f"{tflops / paper:.2f}")
        else:
            plan = (f"none: {' '.join(error)}", "-", "-", "-")
        priced, reference = "- (pipeline)", None
        if p == 1 and entry and t == 1:
            reference = entry["references"]["data parallel"]
        elif p == 1:
            paper_entry, more, error = search(
                opt, step, cluster, f"{gpus // t}x{t}",
                os.path.join(work, f"row{index}-paper.json"), opts.time_limit)
            seconds += more
            reference = (paper_entry["references"]["data x tensor parallel"]
                         if paper_entry else None)
            if not paper_entry:
                priced = f"- ({' '.join(error)})"
        paper_step = reference["step_time_s"] if reference else None
        if p == 1 and reference and not reference["fits"]:
            # Megatron-LM accumulates the gradients of micro-batches where
            # the whole batch's activations do not fit: the same layouts
            # over batch / d micro-batches (the accumulation reference,
            # priced without a memory limit as every reference is).
            accumulated, more, _ = search_pipeline(
                opt, step, cluster, 1, batch // d,
                os.path.join(work, f"row{index}-accumulated.json"),
                opts.time_limit, limit="1024TiB", mesh=f"{gpus // t}x{t}")
            seconds += more
            ref = (accumulated or {}).get("references", {}).get(
                "data x tensor parallel")
            if ref:
                paper_step = ref["step_time_s"]
                reference = {"fits": max(ref["memory_bytes"]) <= 80 * 2**30,
                             "micro_batches": batch // d}
        if p > 1:
            # Megatron-LM's pipeline of the same stages and micro-batches,
            # priced by the same model (the pipeline report's reference).
            priced_pipeline = pipeline
            if not pipeline:
                # No pipeline of p stages fits: the reference, priced
                # without a memory limit as every reference is, comes from
                # a search without one, whose own pipeline is shown beside
                # it so that both are compared under the same memory.
                priced_pipeline, more, _ = search_pipeline(
                    opt, step, cluster, p, batch // d,
                    os.path.join(work, f"row{index}-reference.json"),
                    opts.time_limit, limit="1024TiB")
                seconds += more
                if priced_pipeline:
                    unlimited = priced_pipeline["step_time_s"]
                    plan = (f"{plan[0]}; without the 80 GiB limit, as the "
                            f"paper's configuration is priced, its {p}-stage "
                            f"pipeline takes {unlimited:.2f} s "
                            f"({total / gpus / unlimited / 1e12:.0f})",
                            *plan[1:])
            ref = (priced_pipeline or {}).get("references", {}).get(
                "data x tensor parallel")
            paper_step = ref["step_time_s"] if ref else None
            if not ref:
                priced = "- (no reference pipeline)"
        if paper_step:
            priced_tflops = total / gpus / paper_step / 1e12
            fits = (reference["fits"] if p == 1 else bool(pipeline))
            priced = (f"{priced_tflops:.0f} ({priced_tflops / paper:.2f})" +
                      ("" if fits else " (does not fit)"))
            if p == 1 and "micro_batches" in reference:
                priced += (f" ({reference['micro_batches']} micro-batches "
                           f"accumulated)")
        print(f"| {index} | {params} | {gpus} | {t}, {p} | {plan[0]} | "
              f"{plan[1]} | {plan[2]} (paper {paper}) | {plan[3]} | "
              f"{priced} | {seconds:.0f} |", flush=True)


if __name__ == "__main__":
    main()
