"""JAX models shared by the StableHLO tests and benchmarks: an MLP with an
Adam training step, and a GPT block with Megatron-style shardings."""

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P


def mlp_params(rng, sizes):
    return [((rng.standard_normal((a, b)) / np.sqrt(a)).astype(np.float32),
             np.zeros(b, np.float32)) for a, b in zip(sizes[:-1], sizes[1:])]


def mlp_loss(params, x, y):
    h = x
    for i, (w, b) in enumerate(params):
        h = h @ w + b
        if i < len(params) - 1:
            h = jax.nn.gelu(h, approximate=False)
    return jnp.mean((h - y) ** 2)


def adam_step(params, m, v, x, y, t=3.0, lr=1e-2, b1=0.9, b2=0.999, eps=1e-8):
    """One step of Adam on the MLP: returns new params, moments and loss."""
    loss, grads = jax.value_and_grad(mlp_loss)(params, x, y)
    m = jax.tree.map(lambda m, g: b1 * m + (1 - b1) * g, m, grads)
    v = jax.tree.map(lambda v, g: b2 * v + (1 - b2) * g * g, v, grads)
    params = jax.tree.map(
        lambda p, a, b: p - lr * (a / (1 - b1 ** t)) /
        (jnp.sqrt(b / (1 - b2 ** t)) + eps), params, m, v)
    return params, m, v, loss


def adam_inputs(rng, sizes=(16, 32, 32, 8), batch=8):
    params = mlp_params(rng, list(sizes))
    m = jax.tree.map(lambda p: (rng.standard_normal(p.shape) * 0.01).astype(np.float32), params)
    v = jax.tree.map(lambda p: (np.abs(rng.standard_normal(p.shape)) * 0.01).astype(np.float32), params)
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    y = rng.standard_normal((batch, sizes[-1])).astype(np.float32)
    return params, m, v, x, y


def cnn(p, x):
    """NHWC: conv 3x3 -> relu -> 2x2 max pool -> grouped conv -> relu ->
    global average pool -> dense."""
    dn = ("NHWC", "HWIO", "NHWC")
    h = jax.lax.conv_general_dilated(x, p["c1"], (1, 1), "SAME", dimension_numbers=dn)
    h = jax.nn.relu(h + p["b1"])
    h = jax.lax.reduce_window(h, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    h = jax.lax.conv_general_dilated(h, p["c2"], (2, 2), ((1, 1), (1, 1)),
                                     dimension_numbers=dn, feature_group_count=2)
    h = jax.nn.relu(h).mean(axis=(1, 2))
    return jax.nn.log_softmax(h @ p["fc"])


def cnn_params(rng):
    def w(*shape):
        return (rng.standard_normal(shape) / np.sqrt(np.prod(shape[:-1]))).astype(np.float32)
    return {"c1": w(3, 3, 3, 8), "b1": np.zeros(8, np.float32),
            "c2": w(3, 3, 4, 16), "fc": w(16, 10)}


def layer_norm(x, g, b):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / jnp.sqrt(var + 1e-5) * g + b


def gpt_block(p, x, heads):
    """Pre-LN GPT block: causal self-attention and a GELU MLP."""
    b, s, d = x.shape
    h = layer_norm(x, p["ln1_g"], p["ln1_b"])
    q, k, v = [(h @ p[n]).reshape(b, s, heads, d // heads) for n in ("wq", "wk", "wv")]
    scores = jnp.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(d // heads).astype(np.float32)
    mask = jnp.tril(jnp.ones((s, s), bool))
    scores = jnp.where(mask, scores, -1e9)
    att = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(scores, -1), v).reshape(b, s, d)
    x = x + att @ p["wo"]
    h = layer_norm(x, p["ln2_g"], p["ln2_b"])
    return x + jax.nn.gelu(h @ p["w1"], approximate=False) @ p["w2"]


def gpt_params(rng, d):
    def w(a, b):
        return (rng.standard_normal((a, b)) / np.sqrt(a)).astype(np.float32)
    return {"ln1_g": np.ones(d, np.float32), "ln1_b": np.zeros(d, np.float32),
            "wq": w(d, d), "wk": w(d, d), "wv": w(d, d), "wo": w(d, d),
            "ln2_g": np.ones(d, np.float32), "ln2_b": np.zeros(d, np.float32),
            "w1": w(d, 4 * d), "w2": w(4 * d, d)}


def megatron_shardings(mesh, params):
    """Column-parallel q/k/v and w1, row-parallel wo and w2 over axis 'tp';
    the rest replicated."""
    column = {"wq", "wk", "wv", "w1"}
    row = {"wo", "w2"}
    return {k: NamedSharding(mesh, P(None, "tp") if k in column else
                             P("tp", None) if k in row else P())
            for k in params}
