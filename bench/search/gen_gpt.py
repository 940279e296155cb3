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
`--gpt2` writes GPT-2's block as Megatron-LM builds it (LayerNorm with a
gain and a bias, biased projections, the tanh GeLU, causal attention,
learned positions, a final LayerNorm: 13 h more parameters a layer), and
`--dropout P` adds its dropouts (embedding, attention probabilities, each
residual branch), masks hashed from each element's indices.

  gen_gpt.py --hidden 12288 --heads 96 --batch 8 --seq 512 --layers 1
  gen_gpt.py --hidden 2304 --heads 24 --batch 512 --seq 2048 --layers 24 \
      --vocab 51200 --dtype bf16 --param-dtype f32 --loop
"""
import argparse
import sys


LOWEST = {"f64": "-1.7976931348623157e+308", "f32": "-3.40282347e+38",
          "bf16": "-3.38953139e+38",
          "f16": "-6.55040e+04"}


def emit(out, hidden, heads, batch, seq, layers, dtype="f32", vocab=0,
         loop=False, param_dtype=None, gpt2=False, dropout=0.0):
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
    if gpt2:
        # LayerNorm gains and biases, the projections' biases: 13 h a layer.
        names += ("ln1g", "ln1b", "bq", "bk", "bv", "bo", "ln2g", "ln2b",
                  "b1_", "b2_")
        shapes += (f"{h}",) * 8 + (f"{4 * h}", f"{h}")
    args = [f"%tokens: tensor<{n}xi64>", f"%wte: tensor<{vocab}x{h}x{pf}>"] \
        if vocab else [f"%x: {act}"]
    if loop:
        args += [f"%{nm}all: tensor<{layers}x{sh}x{pf}>"
                 for nm, sh in zip(names, shapes)]
    else:
        for l in range(layers):
            args += [f"%{nm}{l}: tensor<{sh}x{pf}>"
                     for nm, sh in zip(names, shapes)]
    if vocab and gpt2:
        args += [f"%wpe: tensor<{s}x{h}x{pf}>", f"%lnfg: tensor<{h}x{pf}>",
                 f"%lnfb: tensor<{h}x{pf}>"]
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
    if gpt2:
        p("#v1 = affine_map<(i) -> (i)>\n#c2 = affine_map<(i, j) -> (j)>\n")
        p("#t3 = affine_map<(b, i, j) -> (b, i, j)>\n")
        p("#p3 = affine_map<(b, i, j) -> (i, j)>\n")
        p("#b3 = affine_map<(b, i, j) -> (j)>\n")
    p(f"func.func @gpt({', '.join(args)}) -> {logits if vocab else act} {{\n")
    p(f"  %zero = arith.constant 0.0 : {f}\n")
    p(f"  %lowest = arith.constant {LOWEST[f]} : {f}\n")
    p(f"  %inv_h = arith.constant {1.0 / h:.9e} : {f}\n")
    p(f"  %scale = arith.constant {d ** -0.5:.9e} : {f}\n")
    p(f"  %eps = arith.constant 1.0e-5 : {f}\n")
    if dropout:
        p(f"  %keep_scale = arith.constant {1 / (1 - dropout):.9e} : {f}\n")
        # Kept where the hash, as an unsigned 64-bit integer, is at least
        # the dropped fraction of 2^64.
        below = int(dropout * 2 ** 64)
        p(f"  %drop_below = arith.constant "
          f"{below - 2 ** 64 if below >= 2 ** 63 else below} : i64\n")
        for name, value in (("mix_gamma", 0x9E3779B97F4A7C15),
                            ("mix_a", 0xBF58476D1CE4E5B9),
                            ("mix_b", 0x94D049BB133111EB)):
            p(f"  %{name} = arith.constant {value - 2 ** 64} : i64\n")
        # Shifts, the sites' numbers, the extents the key is built of.
        for value in sorted({27, 30, 31, 8, 1, 2, 3, 4, n, h, b, a, s}):
            p(f"  %c{value}_i64 = arith.constant {value} : i64\n")
        for l in range(1 if loop else layers):
            p(f"  %dlayer{l} = arith.constant {l} : index\n")
    if gpt2:
        p(f"  %half = arith.constant 0.5 : {f}\n")
        p(f"  %one = arith.constant 1.0 : {f}\n")
        p(f"  %gelu_a = arith.constant 4.471500000e-02 : {f}\n")
        p(f"  %gelu_c = arith.constant {(2 / 3.141592653589793) ** 0.5:.9e} "
          f": {f}\n")
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
        rank = shape.count("x") + 1
        ident = "#m2" if rank == 2 else "#v1"
        iters = ", ".join(['"parallel"'] * rank)
        p(f"  {v} = linalg.generic {{indexing_maps = [{ident}, {ident}], "
          f"iterator_types = [{iters}]}} "
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

    # The layer whose ops are written (its index), for dropout's masks.
    layer = ["%dlayer0"]

    def kept(loops, site, value):
        """Payload lines giving `value` dropped out (zero, or scaled by
        1 / (1 - p)) at the element of `loops` (loop, extent) indices, the
        layer and `site`, and the name of that: a counter-based hash
        (SplitMix64's finalizer) of the element's place, as Philox is in
        Megatron-LM, so a layer's recomputation drops the same elements.
        The batch's loop is left out, so that the program cuts into
        micro-batches: every sequence, and every step, has the same masks
        (a workload for the cost model, not a recipe)."""
        if not dropout:
            return "", value
        key = "%dk"
        lines = [f"    %dl = arith.index_cast {layer[0]} : index to i64\n",
                 "    %dl8 = arith.muli %dl, %c8_i64 : i64\n",
                 f"    %dk = arith.addi %dl8, %c{site}_i64 : i64\n"]
        for d, size in loops:
            lines += [f"    %di{d} = linalg.index {d} : index\n",
                      f"    %dc{d} = arith.index_cast %di{d} : index to i64\n",
                      f"    %dm{d} = arith.muli {key}, %c{size}_i64 : i64\n",
                      f"    %dk{d} = arith.addi %dm{d}, %dc{d} : i64\n"]
            key = f"%dk{d}"
        lines += [f"    %z0 = arith.muli {key}, %mix_gamma : i64\n",
                  "    %s0 = arith.shrui %z0, %c30_i64 : i64\n",
                  "    %x0 = arith.xori %z0, %s0 : i64\n",
                  "    %z1 = arith.muli %x0, %mix_a : i64\n",
                  "    %s1 = arith.shrui %z1, %c27_i64 : i64\n",
                  "    %x1 = arith.xori %z1, %s1 : i64\n",
                  "    %z2 = arith.muli %x1, %mix_b : i64\n",
                  "    %s2 = arith.shrui %z2, %c31_i64 : i64\n",
                  "    %hash = arith.xori %z2, %s2 : i64\n",
                  "    %keep = arith.cmpi uge, %hash, %drop_below : i64\n",
                  f"    %scaled = arith.mulf {value}, %keep_scale : {f}\n",
                  f"    %dropped = arith.select %keep, %scaled, %zero : {f}\n"]
        return "".join(lines), "%dropped"

    def residual(x, y, bias, site):
        """`x + dropout(y + bias)`, as Megatron-LM's fused bias-dropout-add
        (without --gpt2: `x + y`), on [batch, seq, hidden] views."""
        if not gpt2:
            return add(x, y, act)
        t3 = f"tensor<{b}x{s}x{h}x{f}>"
        x3, y3, e, v3, v = (fresh("rx"), fresh("ry"), empty(t3), fresh("res3"),
                            fresh("res"))
        for src_, dst in ((x, x3), (y, y3)):
            p(f"  {dst} = tensor.expand_shape {src_} [[0, 1], [2]] "
              f"output_shape [{b}, {s}, {h}] : {act} into {t3}\n")
        lines, out = kept(((1, s), (2, h)), site, "%yb")
        p(f"  {v3} = linalg.generic {{indexing_maps = [#t3, #t3, #b3, #t3], "
          f"iterator_types = [\"parallel\", \"parallel\", \"parallel\"]}} "
          f"ins({x3}, {y3}, {bias} : {t3}, {t3}, tensor<{h}x{f}>) "
          f"outs({e} : {t3}) {{\n"
          f"  ^bb0(%i0: {f}, %i1: {f}, %b: {f}, %o: {f}):\n"
          f"    %yb = arith.addf %i1, %b : {f}\n{lines}"
          f"    %v = arith.addf %i0, {out} : {f}\n"
          f"    linalg.yield %v : {f}\n  }} -> {t3}\n")
        p(f"  {v} = tensor.collapse_shape {v3} [[0, 1], [2]] : {t3} "
          f"into {act}\n")
        return v

    def row_sum(x, prefix, square=False):
        """The sum of each row of `x` (of its squares)."""
        z = filled(row)
        v = fresh(prefix)
        term = "%sq" if square else "%in"
        sq = f"    %sq = arith.mulf %in, %in : {f}\n" if square else ""
        p(f"  {v} = linalg.generic {{indexing_maps = [#m2, #r2], "
          f"iterator_types = [\"parallel\", \"reduction\"]}} "
          f"ins({x} : {act}) outs({z} : {row}) {{\n"
          f"  ^bb0(%in: {f}, %acc: {f}):\n{sq}"
          f"    %sum = arith.addf %acc, {term} : {f}\n"
          f"    linalg.yield %sum : {f}\n  }} -> {row}\n")
        return v

    def layer_norm(x, gain, bias):
        """LayerNorm over the hidden dimension, with a gain and a bias."""
        mean = row_sum(x, "msum")
        e = empty(act)
        xc = fresh("xc")
        p(f"  {xc} = linalg.generic {{indexing_maps = [#m2, #r2, #m2], "
          f"iterator_types = [\"parallel\", \"parallel\"]}} "
          f"ins({x}, {mean} : {act}, {row}) outs({e} : {act}) {{\n"
          f"  ^bb0(%in: {f}, %s: {f}, %o: {f}):\n"
          f"    %mean = arith.mulf %s, %inv_h : {f}\n"
          f"    %v = arith.subf %in, %mean : {f}\n"
          f"    linalg.yield %v : {f}\n  }} -> {act}\n")
        var = row_sum(xc, "vsum", square=True)
        e = empty(act)
        y = fresh("ln")
        vec = f"tensor<{h}x{f}>"
        p(f"  {y} = linalg.generic {{indexing_maps = [#m2, #r2, #c2, #c2, "
          f"#m2], iterator_types = [\"parallel\", \"parallel\"]}} "
          f"ins({xc}, {var}, {gain}, {bias} : {act}, {row}, {vec}, {vec}) "
          f"outs({e} : {act}) {{\n"
          f"  ^bb0(%in: {f}, %s: {f}, %g: {f}, %b: {f}, %o: {f}):\n"
          f"    %var = arith.mulf %s, %inv_h : {f}\n"
          f"    %ve = arith.addf %var, %eps : {f}\n"
          f"    %r = math.rsqrt %ve : {f}\n"
          f"    %n = arith.mulf %in, %r : {f}\n"
          f"    %ng = arith.mulf %n, %g : {f}\n"
          f"    %v = arith.addf %ng, %b : {f}\n"
          f"    linalg.yield %v : {f}\n  }} -> {act}\n")
        return y

    def norm(x, gain=None, bias=None):
        return layer_norm(x, gain, bias) if gpt2 else rms_norm(x)

    def biased(x, bias, ty, width, gelu=False):
        """`x` plus a bias per column, then the tanh GeLU when `gelu`."""
        if not gpt2:
            return x
        e = empty(ty)
        v = fresh("gelu" if gelu else "bias")
        body = f"    %v = arith.addf %in, %b : {f}\n"
        if gelu:
            # 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
            body = (f"    %x = arith.addf %in, %b : {f}\n"
                    f"    %x2 = arith.mulf %x, %x : {f}\n"
                    f"    %x3 = arith.mulf %x2, %x : {f}\n"
                    f"    %ax3 = arith.mulf %x3, %gelu_a : {f}\n"
                    f"    %u = arith.addf %x, %ax3 : {f}\n"
                    f"    %cu = arith.mulf %u, %gelu_c : {f}\n"
                    f"    %t = math.tanh %cu : {f}\n"
                    f"    %t1 = arith.addf %t, %one : {f}\n"
                    f"    %hx = arith.mulf %x, %half : {f}\n"
                    f"    %v = arith.mulf %hx, %t1 : {f}\n")
        p(f"  {v} = linalg.generic {{indexing_maps = [#m2, #c2, #m2], "
          f"iterator_types = [\"parallel\", \"parallel\"]}} "
          f"ins({x}, {bias} : {ty}, tensor<{width}x{f}>) outs({e} : {ty}) "
          f"{{\n  ^bb0(%in: {f}, %b: {f}, %o: {f}):\n{body}"
          f"    linalg.yield %v : {f}\n  }} -> {ty}\n")
        return v

    def causal(value, masked):
        """Payload lines giving `value`, or `masked` where the key (loop 3)
        comes after the query (loop 2), and the name of that; no lines and
        `value` itself for attention without the mask."""
        if not gpt2:
            return "", value
        return ("    %qi = linalg.index 2 : index\n"
                "    %kj = linalg.index 3 : index\n"
                "    %seen = arith.cmpi ule, %kj, %qi : index\n"
                f"    %x = arith.select %seen, {value}, {masked} : {f}\n",
                "%x")

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
        if gpt2:
            # Learned positions, the same for every sequence of the batch.
            t3 = f"tensor<{b}x{s}x{h}x{f}>"
            x3, e, pos, xp = fresh("x3"), empty(t3), fresh("pos"), fresh("xp")
            wpe = cast("%wpe", f"{s}x{h}")
            drop_lines, drop_out = kept(((1, s), (2, h)), 1, "%v")
            p(f"  {x3} = tensor.expand_shape {x} [[0, 1], [2]] output_shape "
              f"[{b}, {s}, {h}] : {act} into {t3}\n")
            p(f"  {pos} = linalg.generic {{indexing_maps = [#t3, #p3, #t3], "
              f"iterator_types = [\"parallel\", \"parallel\", "
              f"\"parallel\"]}} ins({x3}, {wpe} : {t3}, "
              f"tensor<{s}x{h}x{f}>) outs({e} : {t3}) {{\n"
              f"  ^bb0(%in: {f}, %w: {f}, %o: {f}):\n"
              f"    %v = arith.addf %in, %w : {f}\n{drop_lines}"
              f"    linalg.yield {drop_out} : {f}\n  }} -> {t3}\n")
            p(f"  {xp} = tensor.collapse_shape {pos} [[0, 1], [2]] : {t3} "
              f"into {act}\n")
            x = xp
    if loop:
        p("  %c0 = arith.constant 0 : index\n  %c1 = arith.constant 1 : index\n")
        p(f"  %cl = arith.constant {layers} : index\n")
        p(f"  %stack = scf.for %layer = %c0 to %cl step %c1 "
          f"iter_args(%h = {x}) -> ({act}) {{\n")
        x = "%h"
        for nm, sh in zip(names, shapes):
            rank = sh.count("x") + 1
            p(f"  %{nm}l = tensor.extract_slice %{nm}all[%layer{', 0' * rank}]"
              f" [1, {sh.replace('x', ', ')}] [1{', 1' * rank}] : "
              f"tensor<{layers}x{sh}x{pf}> to tensor<{sh}x{pf}>\n")
    for l in range(1 if loop else layers):
        layer[0] = "%layer" if loop else f"%dlayer{l}"
        wn = {nm: cast(f"%{nm}l" if loop else f"%{nm}{l}", sh)
              for nm, sh in zip(names, shapes)}
        vec = {nm: wn[nm] for nm in names[6:]}
        ln = norm(x, vec.get("ln1g"), vec.get("ln1b"))
        q = biased(matmul(ln, wn["wq"], act, w, act), vec.get("bq"), act, h)
        # Scaled before the product, which then is a plain batched matmul.
        q = unary(q, act, "qs", "arith.mulf %in, %scale")
        k = biased(matmul(ln, wn["wk"], act, w, act), vec.get("bk"), act, h)
        v = biased(matmul(ln, wn["wv"], act, w, act), vec.get("bv"), act, h)
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
        mask_max, seen_max = causal("%in", "%lowest")
        mask_exp, seen_exp = causal("%e", "%zero")
        zm = filled(sr, "%lowest")
        mx = fresh("max")
        p(f"  {mx} = linalg.generic {{indexing_maps = [#s4, #s3], "
          f"iterator_types = [\"parallel\", \"parallel\", \"parallel\", "
          f"\"reduction\"]}} ins({scores} : {sc}) outs({zm} : {sr}) "
          # The shift's gradient is exactly zero: softmax does not change.
          f"attrs = {{sbp.stop_gradient}} {{\n"
          f"  ^bb0(%in: {f}, %acc: {f}):\n{mask_max}"
          f"    %m = arith.maximumf {seen_max}, %acc : {f}\n"
          f"    linalg.yield %m : {f}\n  }} -> {sr}\n")
        e = empty(sc)
        ex = fresh("exp")
        p(f"  {ex} = linalg.generic {{indexing_maps = [#s4, #s3, #s4], "
          f"iterator_types = [\"parallel\", \"parallel\", \"parallel\", "
          f"\"parallel\"]}} ins({scores}, {mx} : {sc}, {sr}) "
          f"outs({e} : {sc}) {{\n  ^bb0(%in: {f}, %m: {f}, %o: {f}):\n"
          f"    %t = arith.subf %in, %m : {f}\n"
          f"    %e = math.exp %t : {f}\n{mask_exp}"
          f"    linalg.yield {seen_exp} : {f}\n  }} -> {sc}\n")
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
        if dropout:
            # Attention dropout, its own kernel in Megatron-LM too.
            lines, out = kept(((1, a), (2, s), (3, s)), 2, "%in")
            e = empty(sc)
            dr = fresh("probs_dropped")
            p(f"  {dr} = linalg.generic {{indexing_maps = [#s4, #s4], "
              f"iterator_types = [\"parallel\", \"parallel\", "
              f"\"parallel\", \"parallel\"]}} ins({pr} : {sc}) "
              f"outs({e} : {sc}) {{\n  ^bb0(%in: {f}, %o: {f}):\n{lines}"
              f"    linalg.yield {out} : {f}\n  }} -> {sc}\n")
            pr = dr
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
        x = residual(x, matmul(c2, wn["wo"], act, w, act), vec.get("bo"), 3)
        ln = norm(x, vec.get("ln2g"), vec.get("ln2b"))
        hdn = matmul(ln, wn["w1_"], act, w1, hid)
        if gpt2:
            r = biased(hdn, vec["b1_"], hid, 4 * h, gelu=True)
        else:
            r = unary(hdn, hid, "relu", "arith.maximumf %in, %zero")
        x = residual(x, matmul(r, wn["w2_"], hid, w2, act), vec.get("b2_"), 4)
    if loop:
        p(f"  scf.yield {x} : {act}\n  }}\n")
        x = "%stack"
    if vocab:
        if gpt2:
            x = norm(x, cast("%lnfg", f"{h}"), cast("%lnfb", f"{h}"))
        else:
            x = rms_norm(x)
        x = matmul(x, cast("%wout", f"{h}x{vocab}"), act,
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
    parser.add_argument("--gpt2", action="store_true",
                        help="the block as GPT-2 and Megatron-LM write it: "
                        "LayerNorm with a gain and a bias, biased "
                        "projections, the tanh GeLU, causal attention, "
                        "learned positions (with --vocab) and a final "
                        "LayerNorm")
    parser.add_argument("--dropout", type=float, default=0.0,
                        help="with --gpt2: dropout of this fraction where "
                        "Megatron-LM drops out (the embedding, attention's "
                        "probabilities, each residual branch)")
    parser.add_argument("-o", "--output", default="-")
    opts = parser.parse_args()
    if opts.dropout and not opts.gpt2:
        parser.error("--dropout needs --gpt2")
    if not 0 <= opts.dropout < 1:
        parser.error("--dropout must be in [0, 1)")
    if opts.hidden % opts.heads:
        parser.error("--hidden must be a multiple of --heads")
    out = sys.stdout if opts.output == "-" else open(opts.output, "w")
    emit(out, opts.hidden, opts.heads, opts.batch, opts.seq, opts.layers,
         opts.dtype, opts.vocab, opts.loop, opts.param_dtype, opts.gpt2,
         opts.dropout)


if __name__ == "__main__":
    main()
