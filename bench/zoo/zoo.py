#!/usr/bin/env python3
"""The model zoo: real architectures as users export them, through sbp.

Each model is built from its library's config with random weights (no
downloads; every parameter perturbed so that none are equal, as trained
weights are not), exported as users export it (torch.onnx.export with
dynamo at opset 20 for PyTorch models; `jax.jit(f).lower(...).as_text()` for
JAX and Flax, parameters as arguments), and checked four ways:

  import   sbp-run reads it and runs it on one rank;
  1 rank   its outputs equal the framework's (normwise relative error);
  4 ranks  `--ranks 4 --auto` with the user's `--input` files equals one
           rank (`--reference`);
  train    `--train --steps 5` lowers the loss, and the parameters it
           trains (`--list-params`) are the framework's (PyTorch's
           `named_parameters()`, tied weights once; the leaves of a JAX
           parameter tree).

Left out because neither torch.onnx exporter exports them: Hugging Face's
Mixtral (its experts are a grouped-product kernel of transformers' own, or
as a loop a data-dependent token selection torch.export refuses; the JAX
mixture of experts stands for it) and EfficientNet (torch.export fails at
step 1 on its config and so does the TorchScript exporter).

A failure is an exit code and its message, which must name the node or op
(an exit 2), never a crash. Prints one row per model and a closing line
`zoo: N passed, N failed`; `--table FILE` writes the Markdown table of
docs/benchmarks.md (checks; the wall time of one rank's import, compilation
and run, with an empty compilation cache and again from it; and the one-rank
step time against onnxruntime or XLA). A summary line gives the median and
largest of both times.

Usage: build/venv/bin/python bench/zoo/zoo.py --run build/bin/sbp-run
         [--models gpt2,llama,...] [--skip-train] [--table zoo.md]
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

os.environ.setdefault("JAX_PLATFORMS", "cpu")
warnings.filterwarnings("ignore")

import numpy as np  # noqa: E402

TOLERANCE = 1e-4


class Model:
    """One zoo entry: `build()` returns the framework model and its inputs."""

    def __init__(self, name, family, framework, build, train=True):
        self.name, self.family, self.framework = name, family, framework
        self.build, self.train = build, train


# --- PyTorch models from their configs ------------------------------------


def torch_models():
    import torch
    import transformers as tr

    def tokens(vocab, batch=2, seq=16):
        return {"input_ids": torch.randint(0, vocab, (batch, seq))}

    def images(size=32, channels=3, batch=2):
        return {"pixel_values": torch.randn(batch, channels, size, size)}

    class Logits(torch.nn.Module):
        """The model's first output (logits or the last hidden state), as
        users export it: no cache, one tensor."""

        def __init__(self, model, **kwargs):
            super().__init__()
            self.m, self.kwargs = model, kwargs

        def forward(self, *args):
            out = self.m(*args, **self.kwargs)
            if isinstance(out, tuple):
                return out[0]
            for key in ("logits", "last_hidden_state", "prediction_logits"):
                if getattr(out, key, None) is not None:
                    return getattr(out, key)
            return out[0]

    small = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                 intermediate_size=128, vocab_size=256,
                 max_position_embeddings=64)

    def lm(config_class, model_class, **extra):
        def build():
            config = config_class(**{**small, **extra})
            model = model_class(config)
            return Logits(model, use_cache=False), tokens(config.vocab_size)
        return build

    def encoder(config_class, model_class, **extra):
        def build():
            config = config_class(**{**small, **extra})
            return Logits(model_class(config)), tokens(config.vocab_size)
        return build

    def vision(config_class, model_class, size=32, channels=3, **extra):
        def build():
            config = config_class(**extra)
            return Logits(model_class(config)), images(size, channels)
        return build

    def gpt2():
        config = tr.GPT2Config(vocab_size=256, n_embd=64, n_layer=2, n_head=4,
                               n_positions=64)
        return Logits(tr.GPT2LMHeadModel(config), use_cache=False), \
            tokens(256)

    def t5():
        config = tr.T5Config(vocab_size=256, d_model=64, d_kv=16, d_ff=128,
                             num_layers=2, num_decoder_layers=2, num_heads=4)
        model = tr.T5ForConditionalGeneration(config)

        class Seq2Seq(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.m = model

            def forward(self, input_ids, decoder_input_ids):
                return self.m(input_ids=input_ids,
                              decoder_input_ids=decoder_input_ids,
                              use_cache=False).logits
        inputs = tokens(256)
        inputs["decoder_input_ids"] = torch.randint(0, 256, (2, 8))
        return Seq2Seq(), inputs

    def whisper():
        config = tr.WhisperConfig(d_model=64, encoder_layers=2,
                                  encoder_attention_heads=4,
                                  decoder_attention_heads=4,
                                  encoder_ffn_dim=128, num_mel_bins=16,
                                  max_source_positions=32)
        model = tr.WhisperModel(config).get_encoder()
        return Logits(model), {"input_features": torch.randn(2, 16, 64)}

    def wav2vec2():
        config = tr.Wav2Vec2Config(hidden_size=64, num_hidden_layers=2,
                                   num_attention_heads=4,
                                   intermediate_size=128,
                                   conv_dim=(32, 32), conv_stride=(5, 2),
                                   conv_kernel=(10, 3),
                                   num_conv_pos_embeddings=16,
                                   num_conv_pos_embedding_groups=4)
        return Logits(tr.Wav2Vec2Model(config)), \
            {"input_values": torch.randn(2, 400)}

    models = [
        Model("gpt2", "GPT-2", "torch", gpt2),
        Model("llama", "Llama", "torch",
              lm(tr.LlamaConfig, tr.LlamaForCausalLM, num_key_value_heads=2)),
        Model("mistral", "Mistral", "torch",
              lm(tr.MistralConfig, tr.MistralForCausalLM,
                 num_key_value_heads=2)),
        Model("qwen2", "Qwen2", "torch",
              lm(tr.Qwen2Config, tr.Qwen2ForCausalLM, num_key_value_heads=2)),
        Model("gpt_neox", "GPT-NeoX", "torch",
              lm(tr.GPTNeoXConfig, tr.GPTNeoXForCausalLM)),
        Model("opt", "OPT", "torch",
              lm(tr.OPTConfig, tr.OPTForCausalLM, ffn_dim=128,
                 word_embed_proj_dim=64)),
        Model("phi", "Phi", "torch", lm(tr.PhiConfig, tr.PhiForCausalLM)),
        Model("bert", "BERT", "torch",
              encoder(tr.BertConfig, tr.BertForMaskedLM)),
        Model("distilbert", "BERT", "torch",
              lambda: (Logits(tr.DistilBertForMaskedLM(tr.DistilBertConfig(
                  vocab_size=256, dim=64, n_layers=2, n_heads=4,
                  hidden_dim=128, max_position_embeddings=64))),
                  tokens(256))),
        Model("roberta", "BERT", "torch",
              encoder(tr.RobertaConfig, tr.RobertaForMaskedLM,
                      max_position_embeddings=80)),
        Model("electra", "BERT", "torch",
              encoder(tr.ElectraConfig, tr.ElectraForMaskedLM,
                      embedding_size=64)),
        Model("t5", "T5", "torch", t5),
        Model("vit", "ViT", "torch",
              vision(tr.ViTConfig, tr.ViTForImageClassification,
                     hidden_size=64, num_hidden_layers=2,
                     num_attention_heads=4, intermediate_size=128,
                     image_size=32, patch_size=8, num_labels=10)),
        Model("deit", "ViT", "torch",
              vision(tr.DeiTConfig, tr.DeiTForImageClassification,
                     hidden_size=64, num_hidden_layers=2,
                     num_attention_heads=4, intermediate_size=128,
                     image_size=32, patch_size=8, num_labels=10)),
        Model("swin", "Swin", "torch",
              vision(tr.SwinConfig, tr.SwinForImageClassification,
                     image_size=32, patch_size=2, embed_dim=16,
                     depths=[1, 1], num_heads=[2, 4], window_size=4,
                     num_labels=10)),
        Model("convnext", "ConvNeXt", "torch",
              vision(tr.ConvNextConfig, tr.ConvNextForImageClassification,
                     num_stages=2, hidden_sizes=[16, 32], depths=[1, 1],
                     num_labels=10)),
        Model("resnet", "ResNet", "torch",
              vision(tr.ResNetConfig, tr.ResNetForImageClassification,
                     hidden_sizes=[16, 32], depths=[1, 1],
                     embedding_size=16, num_labels=10)),
        Model("mobilenet_v2", "MobileNet", "torch",
              vision(tr.MobileNetV2Config,
                     tr.MobileNetV2ForImageClassification,
                     image_size=32, depth_multiplier=0.25, num_labels=10)),
        Model("regnet", "RegNet", "torch",
              vision(tr.RegNetConfig, tr.RegNetForImageClassification,
                     hidden_sizes=[16, 32], depths=[1, 1],
                     embedding_size=16, groups_width=8, num_labels=10)),
        Model("gemma", "Gemma", "torch",
              lm(tr.GemmaConfig, tr.GemmaForCausalLM, num_key_value_heads=1,
                 head_dim=16)),
        Model("stablelm", "StableLM", "torch",
              lm(tr.StableLmConfig, tr.StableLmForCausalLM,
                 num_key_value_heads=4)),
        Model("bloom", "BLOOM", "torch",
              lambda: (Logits(tr.BloomForCausalLM(tr.BloomConfig(
                  vocab_size=256, hidden_size=64, n_layer=2, n_head=4)),
                  use_cache=False), tokens(256))),
        Model("albert", "BERT", "torch",
              encoder(tr.AlbertConfig, tr.AlbertForMaskedLM,
                      embedding_size=32)),
        Model("beit", "ViT", "torch",
              vision(tr.BeitConfig, tr.BeitForImageClassification,
                     hidden_size=64, num_hidden_layers=2,
                     num_attention_heads=4, intermediate_size=128,
                     image_size=32, patch_size=8, num_labels=10)),
        Model("dinov2", "ViT", "torch",
              vision(tr.Dinov2Config, tr.Dinov2Model, hidden_size=64,
                     num_hidden_layers=2, num_attention_heads=4,
                     image_size=32, patch_size=8)),
        Model("poolformer", "PoolFormer", "torch",
              vision(tr.PoolFormerConfig,
                     tr.PoolFormerForImageClassification,
                     hidden_sizes=[16, 32, 32, 64], depths=[1, 1, 1, 1],
                     num_labels=10)),
        Model("mobilevit", "MobileViT", "torch",
              vision(tr.MobileViTConfig, tr.MobileViTForImageClassification,
                     image_size=32, hidden_sizes=[32, 48, 64],
                     neck_hidden_sizes=[8, 8, 16, 16, 24, 32, 64],
                     num_labels=10)),
        Model("whisper_encoder", "Whisper", "torch", whisper),
        Model("wav2vec2", "Wav2Vec2", "torch", wav2vec2),
    ]
    return models


def perturb(module):
    """Random, distinct values in every parameter: fresh configs initialize
    norms to ones and biases to zeros, which exporters' optimizers merge as
    equal constants."""
    import torch
    generator = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for parameter in module.parameters():
            parameter.add_(0.02 * torch.randn(parameter.shape,
                                              generator=generator))


def torch_parameter_names(module, inputs):
    """`named_parameters()` of the exported module that its forward reads
    (a gradient reaches them; wav2vec2's mask embedding is read only when
    training masks time steps), tied weights once, and each name's
    canonical one (an exporter may name a tied weight by any of its
    names)."""
    import torch
    module.zero_grad(set_to_none=True)
    module(*inputs.values()).float().sum().backward()
    canonical = {}
    first = {}
    for name, parameter in module.named_parameters(remove_duplicate=False):
        canonical[name] = first.setdefault(id(parameter), name)
    read = {name for name, parameter in module.named_parameters()
            if parameter.grad is not None}
    module.zero_grad(set_to_none=True)
    return sorted(set(canonical.values()) & read), canonical


def by_value(path, module, name):
    """The name of the parameter of `module` that initializer `name` of the
    model at `path` holds, as it is or transposed; `name` when none does."""
    import onnx
    from onnx import numpy_helper
    for tensor in onnx.load(path).graph.initializer:
        if tensor.name != name:
            continue
        value = numpy_helper.to_array(tensor)
        for parameter_name, parameter in module.named_parameters():
            array = parameter.detach().numpy()
            for form in (array, array.T):
                if form.shape == value.shape and np.array_equal(form, value):
                    return parameter_name
    return name


def export_torch(module, inputs, path, optimize=True):
    """Exports as users do: the dynamo exporter at opset 20, else the
    TorchScript exporter at opset 17. Returns the exporter used and the
    framework's outputs."""
    import torch
    module.eval()
    args = tuple(inputs.values())
    try:
        torch.onnx.export(module, args, path, dynamo=True, opset_version=20,
                          input_names=list(inputs), output_names=["output"],
                          external_data=False, optimize=optimize)
        exporter = "dynamo" + ("" if optimize else ", optimize=False")
    except Exception as dynamo_error:  # noqa: BLE001 - try the other one
        try:
            torch.onnx.export(module, args, path, dynamo=False,
                              opset_version=17, input_names=list(inputs),
                              output_names=["output"],
                              do_constant_folding=optimize)
        except Exception:  # noqa: BLE001 - report the first exporter's
            raise dynamo_error
        exporter = "TorchScript" + ("" if optimize else
                                    ", do_constant_folding=False")
    with torch.no_grad():
        return exporter, [module(*args).numpy()]


# --- JAX and Flax programs --------------------------------------------------


def jax_models():
    import jax
    import jax.numpy as jnp

    def init(shapes, seed=0):
        key = jax.random.PRNGKey(seed)
        params = {}
        for name, shape in shapes.items():
            key, sub = jax.random.split(key)
            params[name] = 0.1 * jax.random.normal(sub, shape, jnp.float32)
        return params

    def llama_block():
        d, h, f, s = 64, 4, 128, 16
        params = init({"wq": (d, d), "wk": (d, d), "wv": (d, d),
                       "wo": (d, d), "w1": (d, f), "w3": (d, f),
                       "w2": (f, d), "g1": (d,), "g2": (d,)})

        def rms(x, g):
            return x * jax.lax.rsqrt((x * x).mean(-1, keepdims=True) + 1e-6) \
                * (1 + g)

        def rope(x):
            half = x.shape[-1] // 2
            freq = 1.0 / (10000 ** (jnp.arange(half) / half))
            angle = jnp.arange(x.shape[1])[:, None] * freq[None, :]
            cos, sin = jnp.cos(angle)[None, :, None], jnp.sin(angle)[None, :, None]
            x1, x2 = x[..., :half], x[..., half:]
            return jnp.concatenate([x1 * cos - x2 * sin, x1 * sin + x2 * cos],
                                   -1)

        def f_(p, x):
            b = x.shape[0]
            y = rms(x, p["g1"])
            q = rope((y @ p["wq"]).reshape(b, s, h, d // h))
            k = rope((y @ p["wk"]).reshape(b, s, h, d // h))
            v = (y @ p["wv"]).reshape(b, s, h, d // h)
            scores = jnp.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(d // h)
            mask = jnp.tril(jnp.ones((s, s), bool))
            scores = jnp.where(mask, scores, -1e9)
            a = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(scores), v)
            x = x + a.reshape(b, s, d) @ p["wo"]
            y = rms(x, p["g2"])
            return x + (jax.nn.silu(y @ p["w1"]) * (y @ p["w3"])) @ p["w2"]
        return f_, params, {"x": np.random.default_rng(0).standard_normal(
            (2, s, d)).astype(np.float32)}

    def moe():
        d, e, f = 32, 4, 64
        params = init({"router": (d, e), "w1": (e, d, f), "w2": (e, f, d)})

        def f_(p, x):
            logits = x @ p["router"]
            top, index = jax.lax.top_k(logits, 2)
            gates = jax.nn.softmax(top, -1)
            weights = (jax.nn.one_hot(index, e) * gates[..., None]).sum(-2)
            hidden = jax.nn.gelu(jnp.einsum("td,edf->tef", x, p["w1"]))
            out = jnp.einsum("tef,efd->ted", hidden, p["w2"])
            return (out * weights[..., None]).sum(1)
        return f_, params, {"x": np.random.default_rng(1).standard_normal(
            (16, d)).astype(np.float32)}

    def flax_cnn():
        import flax.linen as nn

        class CNN(nn.Module):
            @nn.compact
            def __call__(self, x):
                x = nn.Conv(8, (3, 3))(x)
                x = nn.BatchNorm(use_running_average=True)(x)
                x = nn.relu(x)
                x = nn.avg_pool(x, (2, 2), (2, 2))
                x = nn.Conv(16, (3, 3))(x)
                x = nn.relu(x).mean((1, 2))
                return nn.Dense(10)(x)
        model = CNN()
        x = np.random.default_rng(2).standard_normal((2, 16, 16, 3)).astype(
            np.float32)
        variables = model.init(jax.random.PRNGKey(0), x)
        # Batch statistics are state, not parameters: constants here.
        params = variables["params"]
        stats = jax.tree_util.tree_map(
            lambda v: v + 0.1 * jax.random.uniform(jax.random.PRNGKey(3),
                                                    v.shape),
            variables["batch_stats"])

        def f_(p, x):
            return model.apply({"params": p, "batch_stats": stats}, x)
        return f_, params, {"x": x}

    def flax_lm():
        import flax.linen as nn

        class LM(nn.Module):
            @nn.compact
            def __call__(self, ids):
                x = nn.Embed(128, 32)(ids)
                for _ in range(2):
                    y = nn.LayerNorm()(x)
                    y = nn.SelfAttention(num_heads=4, qkv_features=32,
                                         deterministic=True)(y)
                    x = x + y
                    y = nn.LayerNorm()(x)
                    x = x + nn.Dense(32)(nn.gelu(nn.Dense(64)(y)))
                return nn.Dense(128)(nn.LayerNorm()(x))
        model = LM()
        ids = np.random.default_rng(4).integers(0, 128, (2, 8)).astype(
            np.int32)
        params = model.init(jax.random.PRNGKey(0), ids)["params"]
        return (lambda p, ids: model.apply({"params": p}, ids)), params, \
            {"ids": ids}

    return [Model("jax_llama_block", "Llama", "jax", llama_block),
            Model("jax_moe", "Mixtral", "jax", moe),
            Model("flax_cnn", "ResNet", "jax", flax_cnn),
            Model("flax_lm", "GPT-2", "jax", flax_lm)]


def export_jax(model, f, params, inputs, path):
    """Exports `f(params, *inputs)` with the parameters as leading
    arguments; writes their values beside it (.npy) and returns the
    arguments' files and the framework's outputs."""
    import jax
    leaves, treedef = jax.tree_util.tree_flatten(params)
    values = [np.asarray(v) for v in leaves]

    def flat(*args):
        p = jax.tree_util.tree_unflatten(treedef, args[:len(values)])
        return f(p, *args[len(values):])
    args = values + list(inputs.values())
    with open(path, "w") as out:
        out.write(jax.jit(flat).lower(*args).as_text())
    return values, [np.asarray(jax.jit(flat)(*args))]


# --- Running sbp ------------------------------------------------------------


def run(command, timeout):
    start = time.time()
    try:
        done = subprocess.run(command, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return 124, "", "timed out after %d s" % timeout, time.time() - start
    return done.returncode, done.stdout, done.stderr, time.time() - start


def relative_error(got, want):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if got.shape != want.shape:
        return float("inf")
    return float(np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-30))


def failure(code, out, err):
    lines = [l for l in (err + out).strip().splitlines() if l.strip()]
    text = lines[-1] if lines else ""
    if code < 0 or code > 3:
        text = "CRASH (exit %d) %s" % (code, text)
    return text[:200]


def check(model, sbp_run, workdir, train, timeout):
    """Returns the row of one model: its checks and figures."""
    row = {"model": model.name, "family": model.family, "ok": False}
    directory = os.path.join(workdir, model.name)
    os.makedirs(directory, exist_ok=True)
    flags, train_flags = [], []
    framework_params, aliases = None, {}
    try:
        if model.framework == "torch":
            import torch
            torch.manual_seed(0)
            module, inputs = model.build()
            perturb(module)
            path = os.path.join(directory, model.name + ".onnx")
            start = time.time()
            row["exporter"], expected = export_torch(module, inputs, path)
            row["export_s"] = time.time() - start
            for name, value in inputs.items():
                file = os.path.join(directory, name + ".npy")
                np.save(file, value.numpy())
                flags += ["--input", "%s=%s" % (name, file)]
            framework_params, aliases = torch_parameter_names(module, inputs)
            # What the model keeps fixed (Whisper's sinusoidal positions)
            # the exporter records as parameters all the same: the user
            # says so, as to an optimizer.
            fixed = [name for name, parameter in module.named_parameters()
                     if not parameter.requires_grad]
            if fixed:
                train_flags = ["--frozen", ",".join(fixed)]
            peer = peer_onnxruntime(path, inputs)
        else:
            f, params, inputs = model.build()
            path = os.path.join(directory, model.name + ".mlir")
            start = time.time()
            values, expected = export_jax(model, f, params, inputs, path)
            row["export_s"] = time.time() - start
            row["exporter"] = "jax.jit lower"
            for i, value in enumerate(values + list(inputs.values())):
                file = os.path.join(directory, "arg%d.npy" % i)
                np.save(file, value)
                flags += ["--input", "arg%d=%s" % (i, file)]
            # A JAX program does not say which arguments are parameters:
            # the user does, as here.
            framework_params = ["arg%d" % i for i in range(len(values))]
            train_flags = ["--params", ",".join(framework_params)]
            peer = peer_jax(f, params, inputs)
    except Exception as e:  # noqa: BLE001 - the exporter's own failure
        row["error"] = "export: %s" % str(e).splitlines()[0][:200]
        return row

    # The user's wait for one rank: import, compile and one run, first
    # with an empty compilation cache, then again from it; then the results
    # and the step time, from the cache.
    cache = os.path.join(directory, "cache")
    shutil.rmtree(cache, ignore_errors=True)
    out = os.path.join(directory, "one")
    for key, extra in (("compile_s", []), ("cached_s", []),
                       ("bench_s", ["--output-dir", out, "--bench", "5"])):
        code, stdout, stderr, row[key] = run(
            [sbp_run, path] + flags + ["--cache", cache] + extra, timeout)
        if code != 0:
            row["error"] = "1 rank: " + failure(code, stdout, stderr)
            return row
    median = re.search(r"time_ms median=([0-9.]+)", stdout)
    row["sbp_ms"] = float(median.group(1)) if median else None
    row["peer_ms"] = peer
    got = np.load(os.path.join(out, "result0.npy"))
    row["err1"] = relative_error(got, expected[0])
    if not row["err1"] <= TOLERANCE:
        row["error"] = "1 rank differs from the framework: %.3g" % row["err1"]
        return row

    code, stdout, stderr, seconds = run(
        [sbp_run, path, "--ranks", "4", "--auto", "--reference"] + flags,
        timeout)
    found = re.search(r"max_rel_err=(\S+)", stdout)
    row["err4"] = float(found.group(1)) if found else None
    if code != 0:
        row["error"] = "4 ranks: " + failure(code, stdout, stderr)
        return row
    plan = re.findall(r"^(?:pipeline: .*|ran @\S+ on .*)$", stdout, re.M)
    row["plan"] = "; ".join(plan)

    if train and model.train:
        code, stdout, stderr, seconds = run(
            [sbp_run, path, "--train", "--steps", "5", "--list-params"]
            + flags + train_flags, timeout)
        trained = re.findall(r"^param (\S+) ", stdout, re.M)
        if (model.framework == "torch" and code == 0 and
                sorted(set(aliases.get(n, n) for n in trained)) !=
                framework_params):
            # The exporter's optimizer merged parameters into one folded
            # tensor (a convolution with its batch norm), or the exporter
            # recorded no names for what it folded (TorchScript): the
            # unoptimized export keeps them apart, under their names.
            path = os.path.join(directory, model.name + ".train.onnx")
            exporter, _ = export_torch(module, inputs, path, optimize=False)
            row["exporter"] += "; trained: " + exporter
            code, stdout, stderr, seconds = run(
                [sbp_run, path, "--train", "--steps", "5", "--list-params"]
                + flags + train_flags, timeout)
        losses = [float(v) for v in re.findall(r"step=\d+ loss=(\S+)", stdout)]
        trained = sorted(re.findall(r"^param (\S+) ", stdout, re.M))
        if code != 0 or len(losses) < 5:
            row["error"] = "train: " + failure(code, stdout, stderr)
            return row
        row["loss"] = (losses[0], losses[-1])
        row["params"] = (len(trained), len(framework_params))
        if model.framework == "torch":
            # The TorchScript exporter records no names for what it folded
            # (a transposed weight is `onnx::MatMul_755`): such an
            # initializer is the parameter it holds, by value.
            trained = [by_value(path, module, n)
                       if n not in aliases else n for n in trained]
            # The exported module's names, without the wrapper's prefix.
            trained = sorted(re.sub(r"^m\.", "", aliases.get(n, n))
                             for n in trained)
            framework_params = sorted(re.sub(r"^m\.", "", n)
                                      for n in framework_params)
        if trained != sorted(framework_params):
            missing = sorted(set(framework_params) - set(trained))
            extra = sorted(set(trained) - set(framework_params))
            row["error"] = "train: parameters differ (missing %s, extra %s)" % (
                missing[:3], extra[:3])
            return row
        if not losses[-1] < losses[0]:
            row["error"] = "train: loss did not fall (%g -> %g)" % (
                losses[0], losses[-1])
            return row
    row["ok"] = True
    return row


def peer_onnxruntime(path, inputs):
    """onnxruntime's median step on one thread, in ms."""
    try:
        import onnxruntime
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        session = onnxruntime.InferenceSession(path, options)
        feed = {k: v.numpy() for k, v in inputs.items()}
        session.run(None, feed)
        times = []
        for _ in range(5):
            start = time.perf_counter()
            session.run(None, feed)
            times.append((time.perf_counter() - start) * 1e3)
        return float(np.median(times))
    except Exception:  # noqa: BLE001 - no peer figure
        return None


def peer_jax(f, params, inputs):
    import jax
    step = jax.jit(f)
    args = list(inputs.values())
    step(params, *args).block_until_ready()
    times = []
    for _ in range(5):
        start = time.perf_counter()
        step(params, *args).block_until_ready()
        times.append((time.perf_counter() - start) * 1e3)
    return float(np.median(times))


def table(rows):
    lines = ["| model | family | exporter | 1 rank vs framework | 4 ranks vs 1 | "
             "trained params (sbp / framework) | loss, step 1 -> 5 | "
             "1 rank, cold / cached (s) | sbp / peer ms (1 rank) | result |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        def fmt(key, pattern="%.1e"):
            return pattern % r[key] if r.get(key) is not None else "-"
        speed = "-"
        if r.get("sbp_ms") and r.get("peer_ms"):
            speed = "%.2f / %.2f (%.2fx)" % (r["sbp_ms"], r["peer_ms"],
                                             r["sbp_ms"] / r["peer_ms"])
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["model"], r["family"], r.get("exporter", "-"), fmt("err1"),
            fmt("err4"),
            "%d / %d" % r["params"] if r.get("params") else "-",
            "%.3f -> %.3f" % r["loss"] if r.get("loss") else "-",
            "%s / %s" % (fmt("compile_s", "%.2f"), fmt("cached_s", "%.2f")),
            speed,
            "ok" if r["ok"] else r.get("error", "failed")))
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--run", required=True, help="sbp-run")
    parser.add_argument("--models", help="comma-separated names (all)")
    parser.add_argument("--workdir")
    parser.add_argument("--skip-train", action="store_true")
    parser.add_argument("--timeout", type=int, default=600)
    parser.add_argument("--table", help="write the Markdown table here")
    args = parser.parse_args()
    models = torch_models() + jax_models()
    if args.models:
        wanted = args.models.split(",")
        unknown = set(wanted) - {m.name for m in models}
        if unknown:
            parser.error("unknown models: " + ", ".join(sorted(unknown)))
        models = [m for m in models if m.name in wanted]
    workdir = args.workdir or tempfile.mkdtemp(prefix="sbp-zoo-")
    rows = []
    for model in models:
        row = check(model, args.run, workdir, not args.skip_train,
                    args.timeout)
        rows.append(row)
        print("%-4s %-16s %s" % ("ok" if row["ok"] else "FAIL", model.name,
                                 row.get("plan", "") if row["ok"]
                                 else row.get("error", "")),
              flush=True)
    if args.table:
        with open(args.table, "w") as out:
            out.write(table(rows) + "\n")
    passed = sum(r["ok"] for r in rows)
    families = len({r["family"] for r in rows if r["ok"]})
    print("zoo: %d models of %d families" % (len(rows), families))
    for key, what in (("compile_s", "cold"), ("cached_s", "cached")):
        times = [r[key] for r in rows if r.get(key) is not None]
        if times:
            print("zoo: one rank, %s: median %.2f s, largest %.2f s (%s)" % (
                what, statistics.median(times), max(times),
                max(rows, key=lambda r: r.get(key) or 0)["model"]))
    print("zoo: %d passed, %d failed" % (passed, len(rows) - passed))
    return 0 if passed == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
