#!/usr/bin/env python3
"""Writes a GPT (decoder stack) for one device as MLIR on tensors (linalg,
tensor, arith, math), the input of sbp's auto-parallel search.

Each layer: RMS norm, Q/K/V projections, multi-head attention with a
softmax, the output projection and a residual; RMS norm, an MLP of width
4h with a ReLU, and a residual. Activations are [batch * seq, hidden] f32;
weights are function arguments (wq, wk, wv, wo: h x h; w1: h x 4h;
w2: 4h x h), so one layer holds 12 h^2 parameters. `--vocab V` takes
tokens, embeds them and returns logits; `--loop` writes the layers as one
scf.for over weights stacked [layers, ...]. `--param-dtype f32` with
`--dtype bf16` is mixed precision: the weights (and so their gradients and
optimizer state) are f32 master copies, each cast to bf16 where it is read.

  gen_gpt.py --hidden 12288 --heads 96 --batch 8 --seq 512 --layers 1
  gen_gpt.py --hidden 2304 --heads 24 --batch 512 --seq 2048 --layers 24 \
      --vocab 51200 --dtype bf16 --param-dtype f32 --loop
"""
import argparse
import sys


LOWEST = {"f32": "-3.40282347e+38", "bf16": "-3.38953139e+38",
          "f16": "-6.55040e+04"}


def emit(out, hidden, heads, batch, seq, layers, dtype="f32", vocab=0,
         loop=False, param_dtype=None):
    h, a, b, s = hidden, heads, batch, seq
    d = h // a
    n = b * s
    f = dtype
    # Parameters are kept in `pf` (mixed precision: f32 master weights)
    # and cast to `f` where they are read.
    pf = param_dtype or dtype
    act = f"tensor<{n}x{h}x{f}>"
    w = f"tensor<{h}x{h}x{f}>"
    w1 = f"tensor<{h}x{4 * h}x{f}>"
    w2 = f"tensor<{4 * h}x{h}x{f}>"
    hid = f"tensor<{n}x{4 * h}x{f}>"
    row = f"tensor<{n}x{f}>"
    q4 = f"tensor<{b}x{s}x{a}x{d}x{f}>"
    sc = f"tensor<{b}x{a}x{s}x{s}x{f}>"
    sr = f"tensor<{b}x{a}x{s}x{f}>"
    names = ("wq", "wk", "wv", "wo", "w1_", "w2_")
    shapes = (f"{h}x{h}", f"{h}x{h}", f"{h}x{h}", f"{h}x{h}", f"{h}x{4 * h}",
              f"{4 * h}x{h}")
    args = [f"%tokens: tensor<{n}xi64>", f"%wte: tensor<{vocab}x{h}x{pf}>"] \
        if vocab else [f"%x: {act}"]
    if loop:
        args += [f"%{nm}all: tensor<{layers}x{sh}x{pf}>"
                 for nm, sh in zip(names, shapes)]
    else:
        for l in range(layers):
            args += [f"%{nm}{l}: tensor<{sh}x{pf}>"
                     for nm, sh in zip(names, shapes)]
    if vocab:
        args.append(f"%wout: tensor<{h}x{vocab}x{pf}>")
    logits = f"tensor<{n}x{vocab}x{f}>"
    p = out.write
    p("#m2 = affine_map<(i, j) -> (i, j)>\n#r2 = affine_map<(i, j) -> (i)>\n")
    p("#qk_q = affine_map<(b, a, i, j, d) -> (b, i, a, d)>\n")
    p("#qk_k = affine_map<(b, a, i, j, d) -> (b, j, a, d)>\n")
    p("#qk_s = affine_map<(b, a, i, j, d) -> (b, a, i, j)>\n")
    p("#s4 = affine_map<(b, a, i, j) -> (b, a, i, j)>\n")
    p("#s3 = affine_map<(b, a, i, j) -> (b, a, i)>\n")
    p("#pv_p = affine_map<(b, i, a, d, j) -> (b, a, i, j)>\n")
    p("#pv_v = affine_map<(b, i, a, d, j) -> (b, j, a, d)>\n")
    p("#pv_o = affine_map<(b, i, a, d, j) -> (b, i, a, d)>\n")
    p(f"func.func @gpt({', '.join(args)}) -> {logits if vocab else act} {{\n")
    p(f"  %zero = arith.constant 0.0 : {f}\n")
    p(f"  %lowest = arith.constant {LOWEST[f]} : {f}\n")
    p(f"  %inv_h = arith.constant {1.0 / h:.9e} : {f}\n")
    p(f"  %scale = arith.constant {d ** -0.5:.9e} : {f}\n")
    p(f"  %eps = arith.constant 1.0e-5 : {f}\n")
    counter = [0]

    def fresh(prefix):
        counter[0] += 1
        return f"%{prefix}{counter[0]}"

    def empty(ty):
        v = fresh("e")
        p(f"  {v} = tensor.empty() : {ty}\n")
        return v

    def filled(ty, value="%zero"):
        e = empty(ty)
        v = fresh("z")
        p(f"  {v} = linalg.fill ins({value} : {f}) outs({e} : {ty}) -> {ty}\n")
        return v

    def matmul(x, wt, xty, wty, oty):
        z = filled(oty)
        v = fresh("mm")
        p(f"  {v} = linalg.matmul ins({x}, {wt} : {xty}, {wty}) "
          f"outs({z} : {oty}) -> {oty}\n")
        return v

    def rms_norm(x):
        z = filled(row)
        ss = fresh("ss")
        p(f"  {ss} = linalg.generic {{indexing_maps = [#m2, #r2], "
          f"iterator_types = [\"parallel\", \"reduction\"]}} ins({x} : {act}) "
          f"outs({z} : {row}) {{\n  ^bb0(%in: {f}, %acc: {f}):\n"
          f"    %sq = arith.mulf %in, %in : {f}\n"
          f"    %sum = arith.addf %acc, %sq : {f}\n"
          f"    linalg.yield %sum : {f}\n  }} -> {row}\n")
        e = empty(act)
        y = fresh("norm")
        p(f"  {y} = linalg.generic {{indexing_maps = [#m2, #r2, #m2], "
          f"iterator_types = [\"parallel\", \"parallel\"]}} "
          f"ins({x}, {ss} : {act}, {row}) outs({e} : {act}) {{\n"
          f"  ^bb0(%in: {f}, %s: {f}, %o: {f}):\n"
          f"    %mean = arith.mulf %s, %inv_h : {f}\n"
          f"    %me = arith.addf %mean, %eps : {f}\n"
          f"    %r = math.rsqrt %me : {f}\n"
          f"    %v = arith.mulf %in, %r : {f}\n"
          f"    linalg.yield %v : {f}\n  }} -> {act}\n")
        return y

    def unary(x, ty, prefix, expr):
        """An element-wise generic computing `expr` of `%in`."""
        e = empty(ty)
        v = fresh(prefix)
        p(f"  {v} = linalg.generic {{indexing_maps = [#m2, #m2], "
          f"iterator_types = [\"parallel\", \"parallel\"]}} ins({x} : {ty}) "
          f"outs({e} : {ty}) {{\n  ^bb0(%in: {f}, %o: {f}):\n"
          f"    %v = {expr} : {f}\n"
          f"    linalg.yield %v : {f}\n  }} -> {ty}\n")
        return v

    def cast(wt, shape):
        """A parameter of `shape` in the compute type."""
        if pf == f:
            return wt
        e = empty(f"tensor<{shape}x{f}>")
        v = fresh("cast")
        p(f"  {v} = linalg.generic {{indexing_maps = [#m2, #m2], "
          f"iterator_types = [\"parallel\", \"parallel\"]}} "
          f"ins({wt} : tensor<{shape}x{pf}>) outs({e} : tensor<{shape}x{f}>) "
          f"{{\n  ^bb0(%in: {pf}, %o: {f}):\n"
          f"    %v = arith.truncf %in : {pf} to {f}\n"
          f"    linalg.yield %v : {f}\n  }} -> tensor<{shape}x{f}>\n")
        return v

    def add(x, y, ty):
        e = empty(ty)
        v = fresh("res")
        p(f"  {v} = linalg.generic {{indexing_maps = [#m2, #m2, #m2], "
          f"iterator_types = [\"parallel\", \"parallel\"]}} "
          f"ins({x}, {y} : {ty}, {ty}) outs({e} : {ty}) {{\n"
          f"  ^bb0(%i0: {f}, %i1: {f}, %o: {f}):\n"
          f"    %v = arith.addf %i0, %i1 : {f}\n"
          f"    linalg.yield %v : {f}\n  }} -> {ty}\n")
        return v

    x = "%x"
    if vocab:
        # The embedding: a read of the table at each token, as the ONNX
        # importer writes Gather.
        table = cast("%wte", f"{vocab}x{h}")
        e = empty(act)
        x = fresh("embed")
        p(f"  {x} = linalg.generic {{indexing_maps = [#r2, #m2], "
          f"iterator_types = [\"parallel\", \"parallel\"]}} "
          f"ins(%tokens : tensor<{n}xi64>) outs({e} : {act}) {{\n"
          f"  ^bb0(%id: i64, %o: {f}):\n"
          f"    %row = arith.index_cast %id : i64 to index\n"
          f"    %col = linalg.index 1 : index\n"
          f"    %v = tensor.extract {table}[%row, %col] : "
          f"tensor<{vocab}x{h}x{f}>\n"
          f"    linalg.yield %v : {f}\n  }} -> {act}\n")
    if loop:
        p("  %c0 = arith.constant 0 : index\n  %c1 = arith.constant 1 : index\n")
        p(f"  %cl = arith.constant {layers} : index\n")
        p(f"  %stack = scf.for %layer = %c0 to %cl step %c1 "
          f"iter_args(%h = {x}) -> ({act}) {{\n")
        x = "%h"
        for nm, sh in zip(names, shapes):
            p(f"  %{nm}l = tensor.extract_slice %{nm}all[%layer, 0, 0] "
              f"[1, {sh.replace('x', ', ')}] [1, 1, 1] : "
              f"tensor<{layers}x{sh}x{pf}> to tensor<{sh}x{pf}>\n")
    for l in range(1 if loop else layers):
        wn = {nm: cast(f"%{nm}l" if loop else f"%{nm}{l}", sh)
              for nm, sh in zip(names, shapes)}
        ln = rms_norm(x)
        q = matmul(ln, wn["wq"], act, w, act)
        # Scaled before the product, which then is a plain batched matmul.
        q = unary(q, act, "qs", "arith.mulf %in, %scale")
        k = matmul(ln, wn["wk"], act, w, act)
        v = matmul(ln, wn["wv"], act, w, act)
        q4v, k4v, v4v = fresh("q"), fresh("k"), fresh("v")
        for src, dst in ((q, q4v), (k, k4v), (v, v4v)):
            p(f"  {dst} = tensor.expand_shape {src} [[0, 1], [2, 3]] "
              f"output_shape [{b}, {s}, {a}, {d}] : {act} into {q4}\n")
        z = filled(sc)
        scores = fresh("scores")
        p(f"  {scores} = linalg.generic {{indexing_maps = [#qk_q, #qk_k, #qk_s], "
          f"iterator_types = [\"parallel\", \"parallel\", \"parallel\", "
          f"\"parallel\", \"reduction\"]}} ins({q4v}, {k4v} : {q4}, {q4}) "
          f"outs({z} : {sc}) {{\n  ^bb0(%qi: {f}, %ki: {f}, %acc: {f}):\n"
          f"    %prod = arith.mulf %qi, %ki : {f}\n"
          f"    %sum = arith.addf %acc, %prod : {f}\n"
          f"    linalg.yield %sum : {f}\n  }} -> {sc}\n")
        zm = filled(sr, "%lowest")
        mx = fresh("max")
        p(f"  {mx} = linalg.generic {{indexing_maps = [#s4, #s3], "
          f"iterator_types = [\"parallel\", \"parallel\", \"parallel\", "
          f"\"reduction\"]}} ins({scores} : {sc}) outs({zm} : {sr}) {{\n"
          f"  ^bb0(%in: {f}, %acc: {f}):\n"
          f"    %m = arith.maximumf %in, %acc : {f}\n"
          f"    linalg.yield %m : {f}\n  }} -> {sr}\n")
        e = empty(sc)
        ex = fresh("exp")
        p(f"  {ex} = linalg.generic {{indexing_maps = [#s4, #s3, #s4], "
          f"iterator_types = [\"parallel\", \"parallel\", \"parallel\", "
          f"\"parallel\"]}} ins({scores}, {mx} : {sc}, {sr}) "
          f"outs({e} : {sc}) {{\n  ^bb0(%in: {f}, %m: {f}, %o: {f}):\n"
          f"    %t = arith.subf %in, %m : {f}\n"
          f"    %ex = math.exp %t : {f}\n"
          f"    linalg.yield %ex : {f}\n  }} -> {sc}\n")
        zs = filled(sr)
        sm = fresh("sum")
        p(f"  {sm} = linalg.generic {{indexing_maps = [#s4, #s3], "
          f"iterator_types = [\"parallel\", \"parallel\", \"parallel\", "
          f"\"reduction\"]}} ins({ex} : {sc}) outs({zs} : {sr}) {{\n"
          f"  ^bb0(%in: {f}, %acc: {f}):\n"
          f"    %t = arith.addf %in, %acc : {f}\n"
          f"    linalg.yield %t : {f}\n  }} -> {sr}\n")
        e = empty(sc)
        pr = fresh("probs")
        p(f"  {pr} = linalg.generic {{indexing_maps = [#s4, #s3, #s4], "
          f"iterator_types = [\"parallel\", \"parallel\", \"parallel\", "
          f"\"parallel\"]}} ins({ex}, {sm} : {sc}, {sr}) "
          f"outs({e} : {sc}) {{\n  ^bb0(%in: {f}, %t: {f}, %o: {f}):\n"
          f"    %pr = arith.divf %in, %t : {f}\n"
          f"    linalg.yield %pr : {f}\n  }} -> {sc}\n")
        zc = filled(q4)
        ctx = fresh("ctx")
        p(f"  {ctx} = linalg.generic {{indexing_maps = [#pv_p, #pv_v, #pv_o], "
          f"iterator_types = [\"parallel\", \"parallel\", \"parallel\", "
          f"\"parallel\", \"reduction\"]}} ins({pr}, {v4v} : {sc}, {q4}) "
          f"outs({zc} : {q4}) {{\n  ^bb0(%pi: {f}, %vi: {f}, %acc: {f}):\n"
          f"    %prod = arith.mulf %pi, %vi : {f}\n"
          f"    %sum = arith.addf %acc, %prod : {f}\n"
          f"    linalg.yield %sum : {f}\n  }} -> {q4}\n")
        c2 = fresh("ctx2d")
        p(f"  {c2} = tensor.collapse_shape {ctx} [[0, 1], [2, 3]] : "
          f"{q4} into {act}\n")
        o = matmul(c2, wn["wo"], act, w, act)
        x = add(x, o, act)
        ln = rms_norm(x)
        hdn = matmul(ln, wn["w1_"], act, w1, hid)
        r = unary(hdn, hid, "relu", "arith.maximumf %in, %zero")
        y = matmul(r, wn["w2_"], hid, w2, act)
        x = add(x, y, act)
    if loop:
        p(f"  scf.yield {x} : {act}\n  }}\n")
        x = "%stack"
    if vocab:
        x = matmul(rms_norm(x), cast("%wout", f"{h}x{vocab}"), act,
                   f"tensor<{h}x{vocab}x{f}>", logits)
        act = logits
    p(f"  return {x} : {act}\n}}\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--layers", type=int, default=1)
    parser.add_argument("--dtype", choices=sorted(LOWEST), default="f32")
    parser.add_argument("--param-dtype", choices=sorted(LOWEST),
                        help="keep the parameters in this type (mixed "
                        "precision: f32 master weights), cast to --dtype "
                        "where read")
    parser.add_argument("--vocab", type=int, default=0,
                        help="tokens in, an embedding and logits out")
    parser.add_argument("--loop", action="store_true",
                        help="layers as an scf.for over stacked weights")
    parser.add_argument("-o", "--output", default="-")
    opts = parser.parse_args()
    if opts.hidden % opts.heads:
        parser.error("--hidden must be a multiple of --heads")
    out = sys.stdout if opts.output == "-" else open(opts.output, "w")
    emit(out, opts.hidden, opts.heads, opts.batch, opts.seq, opts.layers,
         opts.dtype, opts.vocab, opts.loop, opts.param_dtype)


if __name__ == "__main__":
    main()
