#!/usr/bin/env python3
"""The correctness harness: partitioned programs equal one rank.

For every op template below and every mesh, asks sbp-opt for the op's valid
signatures (--sbp-print-signatures), writes one program that runs the op
once per signature (the signature recorded on the op, so propagation keeps
it), and runs it with `sbp-run --reference`: the partitioned program on the
threads backend against the logical program on one rank. A second family
converts a tensor between every pair of layouts of a mesh (every boxing).
Shapes are random, most of them not divisible by the mesh (uneven splits).

Exit status 0 when every program matches; otherwise prints each failure.
"""

import argparse
import concurrent.futures
import itertools
import os
import random
import re
import subprocess
import sys
import tempfile

MESHES = {"1": [1], "2": [2], "4": [4], "2x2": [2, 2]}


def tensor(shape, elem="f32"):
    return "tensor<" + "".join(f"{d}x" for d in shape) + elem + ">"


# Each template returns (argument types, body lines, result type); the body
# uses %a0, %a1, ... and defines %r, the op under test carrying {SIG}.
def matmul(rng, elem="f32"):
    m, k, n = rng.choice([5, 6, 7]), rng.choice([4, 5, 9]), rng.choice([4, 6, 7])
    a, b, c = tensor([m, k], elem), tensor([k, n], elem), tensor([m, n], elem)
    return [a, b, c], [
        f"%r = linalg.matmul {{SIG}} ins(%a0, %a1 : {a}, {b}) outs(%a2 : {c}) -> {c}"
    ], c


def matmul_f64(rng):
    return matmul(rng, "f64")


def batch_matmul(rng):
    bt, m, k, n = 4, rng.choice([4, 5]), rng.choice([4, 6]), rng.choice([5, 4])
    a, b, c = tensor([bt, m, k]), tensor([bt, k, n]), tensor([bt, m, n])
    return [a, b, c], [
        f"%r = linalg.batch_matmul {{SIG}} ins(%a0, %a1 : {a}, {b}) outs(%a2 : {c}) -> {c}"
    ], c


def matvec(rng):
    m, n = rng.choice([5, 7]), rng.choice([4, 6])
    a, x, y = tensor([m, n]), tensor([n]), tensor([m])
    return [a, x, y], [
        f"%r = linalg.matvec {{SIG}} ins(%a0, %a1 : {a}, {x}) outs(%a2 : {y}) -> {y}"
    ], y


def addf(rng):
    t = tensor([rng.choice([4, 5, 7]), rng.choice([4, 6, 9])])
    return [t, t], [f"%r = arith.addf %a0, %a1 {{SIG}} : {t}"], t


def addi(rng):
    t = tensor([rng.choice([4, 5, 7]), rng.choice([4, 6])], "i32")
    return [t, t], [f"%r = arith.addi %a0, %a1 {{SIG}} : {t}"], t


def exp(rng):
    t = tensor([rng.choice([4, 5]), rng.choice([4, 7]), 4])
    return [t], [f"%r = math.exp %a0 {{SIG}} : {t}"], t


def bias_add(rng):
    m, n = rng.choice([4, 5, 7]), rng.choice([4, 6, 9])
    t, b = tensor([m, n]), tensor([n])
    return [t, b], [
        f"%r = linalg.generic {{{{indexing_maps = [affine_map<(i, j) -> (i, j)>, "
        f"affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], "
        f'iterator_types = ["parallel", "parallel"]}}}} {{SIG}} '
        f"ins(%a0, %a1 : {t}, {b}) outs(%a0 : {t}) {{",
        "^bb0(%x: f32, %y: f32, %o: f32):",
        "  %s = arith.addf %x, %y : f32",
        "  linalg.yield %s : f32",
        f"}} -> {t}",
    ], t


def reduce(combiner, elem="f32"):
    def template(rng):
        m, n = rng.choice([4, 5, 7]), rng.choice([4, 6, 9])
        t, o = tensor([m, n], elem), tensor([m], elem)
        return [t, o], [
            f"%r = linalg.reduce ins(%a0 : {t}) outs(%a1 : {o}) dimensions = [1] {{SIG}}",
            f"  (%x: {elem}, %y: {elem}) {{",
            f"    %s = {combiner} %x, %y : {elem}",
            f"    linalg.yield %s : {elem}",
            "  }",
        ], o

    return template


def transpose(rng):
    m, n = rng.choice([4, 5, 7]), rng.choice([4, 6])
    t, o = tensor([m, n]), tensor([n, m])
    return [t, o], [
        f"%r = linalg.transpose ins(%a0 : {t}) outs(%a1 : {o}) permutation = [1, 0] {{SIG}}"
    ], o


def expand(rng):
    m = rng.choice([4, 5, 6])
    t, o = tensor([m, 8]), tensor([m, 2, 4])
    return [t], [
        f"%r = tensor.expand_shape %a0 [[0], [1, 2]] output_shape [{m}, 2, 4] {{SIG}} : {t} into {o}"
    ], o


def collapse(rng):
    m = rng.choice([4, 5, 6])
    t, o = tensor([m, 2, 4]), tensor([m, 8])
    return [t], [f"%r = tensor.collapse_shape %a0 [[0], [1, 2]] {{SIG}} : {t} into {o}"], o


def extract_slice(rng):
    m, n = rng.choice([8, 9]), rng.choice([8, 10])
    t, o = tensor([m, n]), tensor([m, 4])
    return [t], [f"%r = tensor.extract_slice %a0[0, 2] [{m}, 4] [1, 1] {{SIG}} : {t} to {o}"], o


def concat(rng):
    m = rng.choice([4, 5, 7])
    a, b, o = tensor([m, 3]), tensor([m, 5]), tensor([m, 8])
    return [a, b], [f"%r = tensor.concat dim(1) %a0, %a1 {{SIG}} : ({a}, {b}) -> {o}"], o


def fill(rng):
    t = tensor([rng.choice([4, 5, 7]), 6])
    return [t], ["%c = arith.constant 1.5 : f32",
                 f"%r = linalg.fill {{SIG}} ins(%c : f32) outs(%a0 : {t}) -> {t}"], t


def softmax(rng):
    t = tensor([rng.choice([4, 5, 7]), rng.choice([4, 6, 9]), 4])
    return [t, t], [
        f"%r = linalg.softmax {{SIG}} dimension({rng.choice([1, 2])}) "
        f"ins(%a0 : {t}) outs(%a1 : {t}) -> {t}"
    ], t


def pad(rng):
    m, n = rng.choice([4, 5, 7]), rng.choice([4, 6])
    t, o = tensor([m, n]), tensor([m, n + 3])
    return [t], [
        "%c = arith.constant 0.0 : f32",
        f"%r = tensor.pad %a0 low[0, 1] high[0, 2] {{",
        "^bb0(%i: index, %j: index):",
        "  tensor.yield %c : f32",
        f"}} {{SIG}} : {t} to {o}",
    ], o


TEMPLATES = {
    "matmul": matmul,
    "matmul_f64": matmul_f64,
    "batch_matmul": batch_matmul,
    "matvec": matvec,
    "addf": addf,
    "addi": addi,
    "exp": exp,
    "bias_add": bias_add,
    "reduce_sum": reduce("arith.addf"),
    "reduce_max": reduce("arith.maximumf"),
    "reduce_min_i64": reduce("arith.minsi", "i64"),
    "transpose": transpose,
    "expand_shape": expand,
    "collapse_shape": collapse,
    "extract_slice": extract_slice,
    "concat": concat,
    "fill": fill,
    "softmax": softmax,
    "pad": pad,
}


def mesh_decl(shape):
    return f"sbp.mesh @m shape = [{', '.join(map(str, shape))}]"


def nd(entries):
    return f"#sbp.nd<@m, [{entries}]>"


def signatures(args, sbp_opt, mesh, types, body, result):
    """The op's signatures on `mesh`, from --sbp-print-signatures."""
    text = "\n".join([mesh_decl(mesh), function("probe", types, body, result, "")])
    out = subprocess.run([sbp_opt, "--sbp-print-signatures=mesh=m", "-o", "/dev/null"],
                         input=text, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"sbp-opt --sbp-print-signatures failed:\n{out.stderr}\n{text}")
    op = re.search(r"%r = ([\w.]+)", body[-1] if "%r" in body[-1] else next(l for l in body if "%r =" in l)).group(1)
    lines = out.stdout.splitlines()
    start = next(i for i, l in enumerate(lines) if l.strip() == op)
    sigs = []
    for line in lines[start + 1:]:
        m = re.match(r"\s+\((.*)\) -> \((.*)\)$", line)
        if not m:
            break
        sigs.append((re.findall(r"\[[^\]]*\]", m.group(1)), re.findall(r"\[[^\]]*\]", m.group(2))))
    return sigs


def function(name, types, body, result, sig, arg_offset=0):
    params = ", ".join(f"%a{i}: {t}" for i, t in enumerate(types))
    lines = [f"func.func @{name}({params}) -> {result} {{"]
    lines += ["  " + l.replace("{SIG}", sig).replace("{{", "{").replace("}}", "}") for l in body]
    lines += [f"  return %r : {result}", "}"]
    return "\n".join(lines)


def op_case(sbp_opt, mesh_name, template_name, seed):
    rng = random.Random(seed)
    mesh = MESHES[mesh_name]
    types, body, result = TEMPLATES[template_name](rng)
    sigs = signatures(None, sbp_opt, mesh, types, body, result)
    # One function running the op once per signature; every copy reads its
    # own arguments and the function returns every copy's result.
    params, lines, results = [], [], []
    for s, (operands, outs) in enumerate(sigs):
        sig_operands = []
        tensor_operands = iter(operands)
        for i, t in enumerate(types):
            params.append(f"%s{s}_{i}: {t}")
        ops = ", ".join(
            "unit" if e == "*" else nd(e[1:-1]) for e in operands)
        res = ", ".join(nd(e[1:-1]) for e in outs)
        sig = f"{{sbp.operands = [{ops}], sbp.results = [{res}]}}"
        for l in body:
            l = l.replace("{{", "{").replace("}}", "}").replace("{SIG}", sig)
            l = re.sub(r"%a(\d+)", lambda m: f"%s{s}_{m.group(1)}", l)
            l = re.sub(r"%([rcsxyo])\b", lambda m: f"%{m.group(1)}{s}", l)
            lines.append("  " + l)
        results.append((f"%r{s}", result))
    lines.append("  return " + ", ".join(r for r, _ in results) + " : " +
                 ", ".join(t for _, t in results))
    text = "\n".join([mesh_decl(mesh),
                      f"func.func @main({', '.join(params)}) -> ({', '.join(t for _, t in results)}) {{"]
                     + lines + ["}"])
    return text, len(sigs)


def layouts(mesh, rank):
    """Every nd-SBP of a tensor of rank `rank` (partial entries of one layout
    share their reduction kind)."""
    per_axis = [f"S({d})" for d in range(rank)] + ["B", "P(sum)", "P(max)"]
    return [", ".join(c) for c in itertools.product(per_axis, repeat=len(mesh))
            if not ("P(sum)" in c and "P(max)" in c)]


def boxing_cases(mesh_name, seed, chunk=64):
    """Programs that convert a random uneven tensor between every pair of
    layouts of the mesh, `chunk` pairs per program."""
    rng = random.Random(seed)
    mesh = MESHES[mesh_name]
    pairs = list(itertools.product(layouts(mesh, 2), repeat=2))
    programs = []
    for start in range(0, len(pairs), chunk):
        params, rets = [], []
        for i, (src, dst) in enumerate(pairs[start:start + chunk]):
            t = tensor([rng.choice([4, 5, 7, 9]), rng.choice([4, 6, 7])])
            params.append(f"%x{i}: {t} {{sbp.sharding = {nd(src)}}}")
            rets.append((f"%x{i}", f"{t} {{sbp.sharding = {nd(dst)}}}", t))
        text = "\n".join([
            mesh_decl(mesh),
            f"func.func @main({', '.join(params)}) -> ({', '.join(r[1] for r in rets)}) {{",
            "  return " + ", ".join(r[0] for r in rets) + " : " + ", ".join(r[2] for r in rets),
            "}"])
        programs.append((f"boxing_{mesh_name}_{start // chunk}", text, len(pairs[start:start + chunk])))
    return programs


def run(command, name, text, workdir, seed, save):
    path = os.path.join(workdir, name + ".mlir")
    with open(path, "w") as f:
        f.write(text + "\n")
    extra = ["--save-program", os.path.join(save, name)] if save else []
    out = subprocess.run(command[0] + [path] + command[1] + extra +
                         ["--reference", "--seed", str(seed)],
                         capture_output=True, text=True, timeout=600)
    return name, path, out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--opt", required=True, help="the sbp-opt binary")
    parser.add_argument("--run", required=True, help="the sbp-run binary")
    parser.add_argument("--meshes", default="2,4,2x2")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    parser.add_argument("--workdir", default=None)
    parser.add_argument("--launcher", default="",
                        help="command that starts sbp-run, e.g. 'mpirun -np 4'")
    parser.add_argument("--comm", default="threads", help="sbp-run's --comm")
    parser.add_argument("--run-flags", default="",
                        help="more sbp-run flags, e.g. '--backend cuda'")
    parser.add_argument("--save", default=None,
                        help="save each program with its reference into "
                             "SAVE/NAME (sbp-run --save-program) for sbp-exec "
                             "instead of running it")
    args = parser.parse_args()
    workdir = args.workdir or tempfile.mkdtemp(prefix="sbp-harness-")
    os.makedirs(workdir, exist_ok=True)

    programs = []
    counts = {"op signatures": 0, "boxings": 0}
    for mesh_name in args.meshes.split(","):
        for t, name in enumerate(TEMPLATES):
            text, n = op_case(args.opt, mesh_name, name, args.seed * 1000 + t)
            counts["op signatures"] += n
            programs.append((f"{name}_{mesh_name}", text))
        for name, text, n in boxing_cases(mesh_name, args.seed):
            counts["boxings"] += n
            programs.append((name, text))

    failures = 0
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        command = (args.launcher.split() + [args.run, "--comm", args.comm] +
                   args.run_flags.split())
        # The program's path goes right after the sbp-run binary.
        at = len(args.launcher.split()) + 1
        futures = [pool.submit(run, (command[:at], command[at:]), name, text,
                               workdir, args.seed, args.save)
                   for name, text in programs]
        for future in futures:
            name, path, out = future.result()
            done = "saved @" if args.save else "max_rel_err="
            if out.returncode != 0 or done not in out.stdout:
                failures += 1
                print(f"FAIL {name} (exit {out.returncode}): {path}")
                print(out.stdout[-2000:] + out.stderr[-2000:])
    print(f"harness: {len(programs)} programs, {counts['op signatures']} op signatures, "
          f"{counts['boxings']} boxings on meshes {args.meshes}: "
          f"{len(programs) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
