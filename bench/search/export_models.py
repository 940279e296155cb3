#!/usr/bin/env python3
"""Exports the training steps and forward passes that bench/search plans:
Llama-3 8B, 70B and 405B, a Mixtral-style MoE (8 experts, top-2),
BERT-large and ViT-H/14, written in JAX and lowered with abstract shapes
(`jax.jit(f).lower(jax.ShapeDtypeStruct(...))`), so nothing the size of a
weight is ever allocated. The text is the StableHLO that JAX prints, as a
user would hand it to sbp.

A training step is what people write: the loss, `jax.grad`, and a
hand-written AdamW over bf16 weights with f32 moments; it returns the new
weights, the new moments and the loss. The layers are a `lax.scan` over
stacked weights, or with --unroll a Python loop (one copy per layer).

  export_models.py llama3-8b [--kind step|forward] [--unroll]
      [--layers N] [--batch B] [--seq S] [--hidden H ...] -o step.mlir
"""
import argparse
import dataclasses
import math
import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402


@dataclasses.dataclass
class Config:
    family: str          # llama, moe, bert, vit
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    ffn: int
    vocab: int
    batch: int
    seq: int
    experts: int = 0
    top_k: int = 0
    patch: int = 0
    image: int = 0
    dtype: str = "bfloat16"


# The published shapes (Meta's Llama-3 model card; Mixtral-8x7B's
# config.json; BERT-large; ViT-H/14 of Dosovitskiy et al.), with the batch
# and sequence of the search's peer (meta-pytorch/autoparallel's Llama-3
# example: batch 16 x 2048 tokens on 64 GPUs).
CONFIGS = {
    "llama3-8b": Config("llama", 4096, 32, 32, 8, 14336, 128256, 16, 2048),
    "llama3-70b": Config("llama", 8192, 80, 64, 8, 28672, 128256, 16, 2048),
    "llama3-405b": Config("llama", 16384, 126, 128, 8, 53248, 128256, 16,
                          2048),
    "mixtral": Config("moe", 4096, 32, 32, 8, 14336, 32000, 16, 2048,
                      experts=8, top_k=2),
    "bert-large": Config("bert", 1024, 24, 16, 16, 4096, 30522, 32, 512),
    "vit-h": Config("vit", 1280, 32, 16, 16, 5120, 1000, 64, 257, patch=14,
                    image=224),
}


def shapes(c):
    """The weights' shapes: a dict of name -> (shape, stacked per layer)."""
    h, f, L = c.hidden, c.ffn, c.layers
    hd = h // c.heads
    w = {}
    if c.family in ("llama", "moe"):
        w["embed"] = ((c.vocab, h), False)
        w["attn_norm"] = ((L, h), True)
        w["wq"] = ((L, h, c.heads * hd), True)
        w["wk"] = ((L, h, c.kv_heads * hd), True)
        w["wv"] = ((L, h, c.kv_heads * hd), True)
        w["wo"] = ((L, c.heads * hd, h), True)
        w["mlp_norm"] = ((L, h), True)
        if c.family == "moe":
            e = c.experts
            w["router"] = ((L, h, e), True)
            w["w1"] = ((L, e, h, f), True)
            w["w3"] = ((L, e, h, f), True)
            w["w2"] = ((L, e, f, h), True)
        else:
            w["w1"] = ((L, h, f), True)
            w["w3"] = ((L, h, f), True)
            w["w2"] = ((L, f, h), True)
        w["final_norm"] = ((h,), False)
        w["lm_head"] = ((h, c.vocab), False)
    else:
        if c.family == "bert":
            w["embed"] = ((c.vocab, h), False)
            w["pos"] = ((c.seq, h), False)
        else:
            p = c.patch * c.patch * 3
            w["patch"] = ((p, h), False)
            w["cls"] = ((h,), False)
            w["pos"] = ((c.seq, h), False)
        for n in ("ln1_g", "ln1_b", "ln2_g", "ln2_b", "bo", "b2"):
            w[n] = ((L, h), True)
        w["wqkv"] = ((L, h, 3 * h), True)
        w["bqkv"] = ((L, 3 * h), True)
        w["wo"] = ((L, h, h), True)
        w["w1"] = ((L, h, f), True)
        w["b1"] = ((L, f), True)
        w["w2"] = ((L, f, h), True)
        w["final_g"] = ((h,), False)
        w["final_b"] = ((h,), False)
        w["head"] = ((h, c.vocab), False)
    return w


def rms_norm(x, g):
    x32 = x.astype(jnp.float32)
    x32 = x32 * jax.lax.rsqrt(jnp.mean(x32 * x32, -1, keepdims=True) + 1e-5)
    return (x32 * g.astype(jnp.float32)).astype(x.dtype)


def layer_norm(x, g, b):
    x32 = x.astype(jnp.float32)
    mean = jnp.mean(x32, -1, keepdims=True)
    var = jnp.mean(jnp.square(x32 - mean), -1, keepdims=True)
    y = (x32 - mean) * jax.lax.rsqrt(var + 1e-5)
    return (y * g.astype(jnp.float32) + b.astype(jnp.float32)).astype(x.dtype)


def rope(x, positions):
    """Rotary embedding of x [b, s, n, d]; the tables are computed in the
    program from an iota, as Llama's reference code does."""
    d = x.shape[-1]
    freqs = 1.0 / (500000.0 ** (jnp.arange(0, d, 2, dtype=jnp.float32) / d))
    angles = positions[:, None].astype(jnp.float32) * freqs[None, :]
    cos, sin = jnp.cos(angles)[None, :, None, :], jnp.sin(angles)[None, :, None, :]
    x32 = x.astype(jnp.float32)
    x1, x2 = x32[..., : d // 2], x32[..., d // 2:]
    out = jnp.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], -1)
    return out.astype(x.dtype)


def attention(q, k, v, causal):
    """q [b, s, n, d], k and v [b, s, m, d] with n a multiple of m
    (grouped-query attention)."""
    b, s, n, d = q.shape
    m = k.shape[2]
    q = q.reshape(b, s, m, n // m, d)
    scores = jnp.einsum("bsmgd,btmd->bmgst", q, k).astype(jnp.float32)
    scores = scores / math.sqrt(d)
    if causal:
        mask = jnp.tril(jnp.ones((s, s), bool))
        scores = jnp.where(mask, scores, -1e9)
    probs = jax.nn.softmax(scores, -1).astype(v.dtype)
    out = jnp.einsum("bmgst,btmd->bsmgd", probs, v)
    return out.reshape(b, s, n * d)


def moe(c, x, p):
    """GShard's top-2 routing with capacity: each token goes to its two
    best experts, at most `capacity` tokens an expert; dispatch and combine
    are one-hot einsums."""
    b, s, h = x.shape
    tokens = x.reshape(b * s, h)
    logits = jnp.einsum("th,he->te", tokens, p["router"]).astype(jnp.float32)
    gates = jax.nn.softmax(logits, -1)
    capacity = int(1.25 * b * s * c.top_k / c.experts)
    combine = jnp.zeros((b * s, c.experts, capacity), jnp.float32)
    remaining = gates
    filled = jnp.zeros((c.experts,), jnp.int32)
    for _ in range(c.top_k):
        choice = jnp.argmax(remaining, -1)
        onehot = jax.nn.one_hot(choice, c.experts, dtype=jnp.int32)
        position = jnp.cumsum(onehot, 0) - 1 + filled[None, :]
        keep = onehot * (position < capacity)
        filled = filled + jnp.sum(keep, 0)
        gate = jnp.sum(gates * keep, -1)
        slot = jax.nn.one_hot(jnp.sum(position * keep, -1), capacity)
        combine = combine + (gate[:, None, None] * keep[:, :, None] *
                             slot[:, None, :])
        remaining = remaining * (1 - onehot)
    dispatch = (combine > 0).astype(x.dtype)
    expert_in = jnp.einsum("tec,th->ech", dispatch, tokens)
    hidden = (jax.nn.silu(jnp.einsum("ech,ehf->ecf", expert_in, p["w1"])) *
              jnp.einsum("ech,ehf->ecf", expert_in, p["w3"]))
    expert_out = jnp.einsum("ecf,efh->ech", hidden, p["w2"])
    out = jnp.einsum("tec,ech->th", combine.astype(x.dtype), expert_out)
    return out.reshape(b, s, h)


def decoder_layer(c, x, p, positions):
    b, s, h = x.shape
    hd = h // c.heads
    y = rms_norm(x, p["attn_norm"])
    q = (y @ p["wq"]).reshape(b, s, c.heads, hd)
    k = (y @ p["wk"]).reshape(b, s, c.kv_heads, hd)
    v = (y @ p["wv"]).reshape(b, s, c.kv_heads, hd)
    q, k = rope(q, positions), rope(k, positions)
    x = x + attention(q, k, v, causal=True) @ p["wo"]
    y = rms_norm(x, p["mlp_norm"])
    if c.family == "moe":
        return x + moe(c, y, p)
    return x + (jax.nn.silu(y @ p["w1"]) * (y @ p["w3"])) @ p["w2"]


def encoder_layer(c, x, p, positions):
    b, s, h = x.shape
    hd = h // c.heads
    y = layer_norm(x, p["ln1_g"], p["ln1_b"])
    qkv = (y @ p["wqkv"] + p["bqkv"]).reshape(b, s, 3, c.heads, hd)
    att = attention(qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2], causal=False)
    x = x + att @ p["wo"] + p["bo"]
    y = layer_norm(x, p["ln2_g"], p["ln2_b"])
    return x + jax.nn.gelu(y @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]


def forward(c, params, inputs, unroll):
    """Logits of a batch: token ids [b, s] (llama, moe, bert) or images
    [b, 224, 224, 3] (vit)."""
    if c.family == "vit":
        b = inputs.shape[0]
        n = c.image // c.patch
        patches = inputs.reshape(b, n, c.patch, n, c.patch, 3)
        patches = patches.transpose(0, 1, 3, 2, 4, 5).reshape(b, n * n, -1)
        x = patches.astype(params["patch"].dtype) @ params["patch"]
        cls = jnp.broadcast_to(params["cls"], (b, 1, c.hidden))
        x = jnp.concatenate([cls, x], 1) + params["pos"]
    else:
        x = params["embed"][inputs]
        if c.family == "bert":
            x = x + params["pos"]
    positions = jnp.arange(x.shape[1])
    layer = decoder_layer if c.family in ("llama", "moe") else encoder_layer
    stacked = {k: v for k, v in params.items() if shapes(c)[k][1]}
    if unroll:
        for i in range(c.layers):
            x = layer(c, x, {k: v[i] for k, v in stacked.items()}, positions)
    else:
        x, _ = jax.lax.scan(
            lambda x, p: (layer(c, x, p, positions), None), x, stacked)
    if c.family in ("llama", "moe"):
        return rms_norm(x, params["final_norm"]) @ params["lm_head"]
    x = layer_norm(x, params["final_g"], params["final_b"])
    if c.family == "vit":
        x = x[:, 0]
    return x @ params["head"]


def loss_fn(c, params, inputs, labels, unroll):
    logits = forward(c, params, inputs, unroll).astype(jnp.float32)
    logp = jax.nn.log_softmax(logits, -1)
    picked = jnp.take_along_axis(logp, labels[..., None], -1)
    return -jnp.mean(picked)


def train_step(c, unroll, params, mu, nu, inputs, labels):
    """One AdamW step (lr 3e-4, betas 0.9/0.95, weight decay 0.1) with f32
    moments over bf16 weights."""
    loss, grads = jax.value_and_grad(
        lambda p: loss_fn(c, p, inputs, labels, unroll))(params)
    lr, b1, b2, eps, wd = 3e-4, 0.9, 0.95, 1e-8, 0.1
    new_p, new_mu, new_nu = {}, {}, {}
    for k in params:
        g = grads[k].astype(jnp.float32)
        new_mu[k] = b1 * mu[k] + (1 - b1) * g
        new_nu[k] = b2 * nu[k] + (1 - b2) * g * g
        p32 = params[k].astype(jnp.float32)
        update = new_mu[k] / (jnp.sqrt(new_nu[k]) + eps) + wd * p32
        new_p[k] = (p32 - lr * update).astype(params[k].dtype)
    return new_p, new_mu, new_nu, loss


def abstract_inputs(c, kind):
    dtype = jnp.dtype(c.dtype)
    params = {k: jax.ShapeDtypeStruct(s, dtype) for k, (s, _) in
              shapes(c).items()}
    if c.family == "vit":
        inputs = jax.ShapeDtypeStruct((c.batch, c.image, c.image, 3), dtype)
        labels = jax.ShapeDtypeStruct((c.batch,), jnp.int32)
    else:
        inputs = jax.ShapeDtypeStruct((c.batch, c.seq), jnp.int32)
        labels = jax.ShapeDtypeStruct((c.batch, c.seq), jnp.int32)
    if kind == "forward":
        return params, inputs
    moments = {k: jax.ShapeDtypeStruct(s, jnp.float32) for k, (s, _) in
               shapes(c).items()}
    return params, moments, moments, inputs, labels


def export(c, kind, unroll):
    args = abstract_inputs(c, kind)
    if kind == "forward":
        fn = jax.jit(lambda p, x: forward(c, p, x, unroll))
    else:
        fn = jax.jit(lambda *a: train_step(c, unroll, *a))
    return fn.lower(*args).as_text()


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", choices=sorted(CONFIGS))
    parser.add_argument("--kind", choices=("step", "forward"), default="step")
    parser.add_argument("--unroll", action="store_true",
                        help="one copy of the layer per layer (default: "
                        "lax.scan over stacked weights)")
    for field in ("layers", "batch", "seq", "hidden", "heads", "kv_heads",
                  "ffn", "vocab", "experts"):
        parser.add_argument("--" + field.replace("_", "-"), type=int,
                            help="override the published " + field)
    parser.add_argument("--dtype", choices=("bfloat16", "float32"))
    parser.add_argument("-o", "--output", required=True)
    args = parser.parse_args()
    c = dataclasses.replace(CONFIGS[args.model])
    for field in ("layers", "batch", "seq", "hidden", "heads", "kv_heads",
                  "ffn", "vocab", "experts", "dtype"):
        if getattr(args, field) is not None:
            setattr(c, field, getattr(args, field))
    if c.family == "vit" and args.seq is not None:
        sys.exit("export_models.py: ViT's sequence follows from its image")
    text = export(c, args.kind, args.unroll)
    tmp = args.output + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, args.output)


if __name__ == "__main__":
    main()
