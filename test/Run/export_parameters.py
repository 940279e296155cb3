#!/usr/bin/env python3
"""Exports a small language model as users do (torch.onnx.export, dynamo,
opset 20) with each kind of tensor an exporter holds as an initializer: an
embedding tied to the logits (the exporter also holds it transposed), a
learned position table read at the positions of a buffer (folded into the
rows read), a rotary table computed from a buffer of frequencies and a
causal mask (folded constants), a linear layer (transposed) and a LayerNorm.
Writes MODEL.onnx and the names of PyTorch's named_parameters(), one a line,
to MODEL.params."""

import sys
import warnings

import torch
from torch import nn

warnings.filterwarnings("ignore")


class Tiny(nn.Module):
    def __init__(self, vocab=32, width=16, seq=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.positions = nn.Embedding(seq, width)
        self.register_buffer("position_ids", torch.arange(seq)[None],
                             persistent=False)
        self.register_buffer("inv_freq", 1.0 / 100 ** (torch.arange(
            0, width, 2).float() / width), persistent=False)
        self.proj = nn.Linear(width, width)
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, ids):
        seq = ids.shape[1]
        x = self.embed(ids) + self.positions(self.position_ids[:, :seq])
        angle = torch.arange(seq).float()[:, None] * self.inv_freq[None]
        rotary = torch.cat([angle.cos(), angle.sin()], -1)
        scores = x @ x.transpose(1, 2)
        mask = torch.full((seq, seq), float("-inf")).triu(1)
        x = torch.softmax(scores + mask, -1) @ (x * rotary)
        return self.head(self.norm(self.proj(x)))


torch.manual_seed(0)
model = Tiny().eval()
with torch.no_grad():
    for parameter in model.parameters():
        parameter.add_(0.02 * torch.randn(parameter.shape))
torch.onnx.export(model, (torch.randint(0, 32, (2, 8)),), sys.argv[1] + ".onnx",
                  dynamo=True, opset_version=20, input_names=["ids"],
                  output_names=["logits"], external_data=False)
with open(sys.argv[1] + ".params", "w") as out:
    out.write("\n".join(name for name, _ in model.named_parameters()) + "\n")
