"""Shared by the ONNX test scripts: split an imported program's inputs."""

import re


def shard_inputs(text, names, ranks):
    """Adds a 1-d mesh @ranks to MLIR `text` printed by sbp-opt and splits
    the arguments with the given ONNX names along dimension 0."""
    text = re.sub(r"^(module( attributes \{.*\})? \{)$",
                  r'\1\n  sbp.mesh @ranks shape = [%d] axes = ["r"]' % ranks,
                  text, count=1, flags=re.M)
    for name in names:
        text = text.replace(
            '{onnx.name = "%s"}' % name,
            '{onnx.name = "%s", sbp.sharding = #sbp.nd<@ranks, [S(0)]>}' % name,
            1)
    return text
