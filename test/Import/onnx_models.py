#!/usr/bin/env python3
"""Real ONNX models through sbp, against PyTorch and onnxruntime.

The models of shared/testdata/onnx (an MLP, an attention block, a 2-layer GPT
at opsets 14 and 17), a ResNet-18 and a MobileNet-v2 defined here and
exported by PyTorch (opset 17, random weights), and a small GPT and CNN
exported with torch.onnx.export's defaults (opset 20, external data), are run with sbp-run on one
rank and partitioned on four (the batch split, weights replicated and passed
with --input by name). Each result must match the reference (PyTorch for the
CNNs, onnxruntime for the shared models; onnxruntime is checked for all)
within a normwise relative error of 1e-4.

Runs in a virtual environment with torch==2.13.0, onnx, onnxscript and
onnxruntime (scripts/python-venv.sh). Prints one line per model and rank
count and `N passed, N failed`; exits 1 on any failure.
"""

import argparse
import contextlib
import io
import os
import subprocess
import sys
import time

import numpy as np
import onnx
import onnxruntime
import torch
from onnx import numpy_helper

from sharding import shard_inputs
from torch import nn

TOLERANCE = 1e-4


# ResNet-18 (torchvision's layout, written out so no torchvision is needed).
class BasicBlock(nn.Module):
    def __init__(self, inp, out, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(inp, out, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(out)
        self.conv2 = nn.Conv2d(out, out, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(out)
        self.down = None
        if stride != 1 or inp != out:
            self.down = nn.Sequential(nn.Conv2d(inp, out, 1, stride, bias=False),
                                      nn.BatchNorm2d(out))

    def forward(self, x):
        y = torch.relu(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y))
        return torch.relu(y + (self.down(x) if self.down else x))


class ResNet18(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False),
                                  nn.BatchNorm2d(64), nn.ReLU(),
                                  nn.MaxPool2d(3, 2, 1))
        layers, inp = [], 64
        for out, stride in [(64, 1), (128, 2), (256, 2), (512, 2)]:
            layers += [BasicBlock(inp, out, stride), BasicBlock(out, out, 1)]
            inp = out
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(512, classes)

    def forward(self, x):
        x = self.layers(self.stem(x))
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))


# MobileNet-v2: inverted residuals with depthwise convolutions and ReLU6.
def conv_bn(inp, out, kernel, stride, groups=1, act=True):
    layers = [nn.Conv2d(inp, out, kernel, stride, kernel // 2, groups=groups,
                        bias=False), nn.BatchNorm2d(out)]
    return layers + ([nn.ReLU6()] if act else [])


class InvertedResidual(nn.Module):
    def __init__(self, inp, out, stride, expand):
        super().__init__()
        hidden = inp * expand
        layers = conv_bn(inp, hidden, 1, 1) if expand != 1 else []
        layers += conv_bn(hidden, hidden, 3, stride, groups=hidden)
        layers += conv_bn(hidden, out, 1, 1, act=False)
        self.body = nn.Sequential(*layers)
        self.residual = stride == 1 and inp == out

    def forward(self, x):
        return x + self.body(x) if self.residual else self.body(x)


class MobileNetV2(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        layers, inp = conv_bn(3, 32, 3, 2), 32
        for expand, out, repeat, stride in [(1, 16, 1, 1), (6, 24, 2, 2),
                                            (6, 32, 3, 2), (6, 64, 4, 2),
                                            (6, 96, 3, 1), (6, 160, 3, 2),
                                            (6, 320, 1, 1)]:
            for i in range(repeat):
                layers.append(InvertedResidual(inp, out, stride if i == 0 else 1,
                                               expand))
                inp = out
        layers += conv_bn(inp, 1280, 1, 1)
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Linear(1280, classes)

    def forward(self, x):
        x = nn.functional.adaptive_avg_pool2d(self.features(x), 1)
        return self.classifier(torch.flatten(x, 1))


# A GPT and a small CNN as PyTorch's default exporter writes them (torch.export:
# opset 20 with Gelu, Split by num_outputs, weights in an external data file).
class GptBlock(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
        self.fc, self.out = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q, k, v = [y.view(b, t, self.heads, c // self.heads).transpose(1, 2)
                   for y in (q, k, v)]
        y = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
        return x + self.out(nn.functional.gelu(self.fc(self.ln2(x)),
                                               approximate="tanh"))


class Gpt(nn.Module):
    def __init__(self, vocab=64, width=32, heads=4, layers=2, length=16):
        super().__init__()
        self.tokens, self.positions = nn.Embedding(vocab, width), nn.Embedding(length, width)
        self.blocks = nn.ModuleList([GptBlock(width, heads) for _ in range(layers)])
        self.ln, self.head = nn.LayerNorm(width), nn.Linear(width, vocab, bias=False)

    def forward(self, ids):
        x = self.tokens(ids) + self.positions(torch.arange(ids.shape[1]))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln(x))


class SmallCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1, self.bn = nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8)
        self.conv2, self.fc = nn.Conv2d(8, 8, 3, stride=2), nn.Linear(72, 10)
        self.ln, self.drop = nn.LayerNorm(10), nn.Dropout(0.1)

    def forward(self, x):
        x = nn.functional.max_pool2d(torch.relu(self.bn(self.conv1(x))), 2)
        x = self.drop(torch.flatten(nn.functional.gelu(self.conv2(x)), 1))
        return self.ln(self.fc(x))


def export_default(model, example, path):
    """torch.onnx.export with its defaults; returns PyTorch's result."""
    model.eval()
    with torch.no_grad():
        expected = model(example).numpy()
    with contextlib.redirect_stdout(io.StringIO()):
        torch.onnx.export(model, (example,), path, input_names=["x"],
                          output_names=["y"])
    # What this case is for: a later opset and an external data file.
    written = onnx.load(path, load_external_data=False)
    opset = max(o.version for o in written.opset_import if o.domain in ("", "ai.onnx"))
    external = sum(t.data_location == onnx.TensorProto.EXTERNAL
                   for t in written.graph.initializer)
    print("exported %s: opset %d, %d initializers in external data" % (
        os.path.basename(path), opset, external))
    return expected


def randomize_batch_norms(model, generator):
    """Non-trivial running statistics, so that BatchNorm folding is tested."""
    for module in model.modules():
        if isinstance(module, nn.BatchNorm2d):
            n = module.num_features
            module.running_mean.copy_(torch.randn(n, generator=generator) * 0.1)
            module.running_var.copy_(torch.rand(n, generator=generator) + 0.5)
            module.weight.data.copy_(torch.rand(n, generator=generator) + 0.5)
            module.bias.data.copy_(torch.randn(n, generator=generator) * 0.1)


def export_cnn(name, model, path):
    generator = torch.Generator().manual_seed(0)
    randomize_batch_norms(model, generator)
    model.eval()
    x = torch.randn(4, 3, 32, 32, generator=generator)
    with torch.no_grad():
        expected = model(x).numpy()
    torch.onnx.export(model, (x,), path, opset_version=17, dynamo=False,
                      input_names=["x"], output_names=["y"])
    return {"x": x.numpy()}, expected


def normwise_error(actual, expected):
    if actual.shape != expected.shape:
        return float("inf")
    scale = max(float(np.max(np.abs(expected))), 1e-30)
    return float(np.max(np.abs(actual.astype(np.float64) - expected))) / scale


def run_sbp(args, model_path, inputs, shapes, ranks, workdir):
    """Runs the model with sbp-run; returns (result, seconds) or raises."""
    flags = ["--input-shape=%s=%s" % (k, "x".join(map(str, v)))
             for k, v in shapes.items()]
    input_flags = []
    for name, value in inputs.items():
        path = os.path.join(workdir, name.replace("/", "_") + ".npy")
        np.save(path, value)
        input_flags.append("--input=%s=%s" % (name, path))
    program = model_path
    if ranks > 1:
        opt = subprocess.run([args.opt, model_path] + flags,
                             capture_output=True, text=True)
        if opt.returncode != 0:
            raise RuntimeError("sbp-opt: " + opt.stderr.strip()[-500:])
        program = os.path.join(workdir, "sharded%d.mlir" % ranks)
        with open(program, "w") as f:
            f.write(shard_inputs(opt.stdout, list(inputs), ranks))
        # The weights, which the MLIR text does not hold, by name.
        model = onnx.load(model_path)
        for tensor in model.graph.initializer:
            if '{onnx.name = "%s"' % tensor.name not in opt.stdout:
                continue  # a constant, not an argument
            path = os.path.join(workdir, "w%d.npy" % len(input_flags))
            np.save(path, numpy_helper.to_array(tensor))
            input_flags.append("--input=%s=%s" % (tensor.name, path))
        flags = []
    out_dir = os.path.join(workdir, "out%d" % ranks)
    start = time.time()
    proc = subprocess.run([args.run, program, "--ranks", str(ranks),
                           "--output-dir", out_dir] + flags + input_flags,
                          capture_output=True, text=True)
    seconds = time.time() - start
    if proc.returncode != 0:
        raise RuntimeError("sbp-run exit %d: %s" %
                           (proc.returncode, (proc.stderr or proc.stdout)[-500:]))
    return np.load(os.path.join(out_dir, "result0.npy")), seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--opt", required=True)
    parser.add_argument("--run", required=True)
    parser.add_argument("--shared", required=True, help="shared/testdata/onnx")
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--ranks", default="1,4")
    args = parser.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    torch.manual_seed(0)
    rng = np.random.default_rng(0)

    # name -> (path, inputs, --input-shape, reference or None)
    models = {}
    for name, shape in [("mlp", [8, 64]), ("block", [8, 16, 64])]:
        models[name] = (os.path.join(args.shared, name + ".onnx"),
                        {"x": rng.standard_normal(shape).astype(np.float32)},
                        {"x": shape}, None)
    for opset in (14, 17):
        name = "gpt_none_op%d_static" % opset
        path = os.path.join(args.shared, name + ".onnx")
        input_name = onnx.load(path).graph.input[0].name
        ids = rng.integers(0, 512, size=(2, 32)).astype(np.int64)
        models[name] = (path, {input_name: ids}, {}, None)
    for name, model in [("resnet18", ResNet18()), ("mobilenet_v2", MobileNetV2())]:
        path = os.path.join(args.workdir, name + ".onnx")
        inputs, expected = export_cnn(name, model, path)
        models[name] = (path, inputs, {}, expected)

    ids = torch.randint(0, 64, (2, 16), generator=torch.Generator().manual_seed(1))
    image = torch.randn(4, 3, 16, 16, generator=torch.Generator().manual_seed(2))
    for name, model, example in [("gpt_torch_export", Gpt(), ids),
                                 ("cnn_torch_export", SmallCnn(), image)]:
        path = os.path.join(args.workdir, name + ".onnx")
        expected = export_default(model, example, path)
        models[name] = (path, {"x": example.numpy()}, {}, expected)

    passed = failed = 0
    for name, (path, inputs, shapes, torch_ref) in models.items():
        session = onnxruntime.InferenceSession(path,
                                               providers=["CPUExecutionProvider"])
        ort_ref = session.run(None, inputs)[0]
        workdir = os.path.join(args.workdir, name)
        os.makedirs(workdir, exist_ok=True)
        for ranks in [int(r) for r in args.ranks.split(",")]:
            try:
                result, seconds = run_sbp(args, path, inputs, shapes, ranks,
                                          workdir)
            except RuntimeError as e:
                print("FAIL %s on %d rank(s): %s" % (name, ranks, e))
                failed += 1
                continue
            errors = {"onnxruntime": normwise_error(result, ort_ref)}
            if torch_ref is not None:
                errors["pytorch"] = normwise_error(result, torch_ref)
            ok = all(e <= TOLERANCE for e in errors.values())
            passed += ok
            failed += not ok
            print("%s %s on %d rank(s): %s (%.1f s)" % (
                "ok  " if ok else "FAIL", name, ranks,
                " ".join("max_rel_err_vs_%s=%.2g" % kv for kv in errors.items()),
                seconds))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
