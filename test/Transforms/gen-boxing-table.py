#!/usr/bin/env python3
"""Writes a lit test of sbp-partition for every pair of layouts of an 8x12
f32 tensor on the meshes [4] and [2, 2], and of an uneven 6x10 tensor on [4].

Each function boxes its argument from one layout to another. The expected
lowering of a one-axis change is the boxing table of the design reference,
written out here independently of the compiler; every function also checks
the local types of its argument and result, computed here with balanced
hierarchical splits.
"""

import itertools

KINDS = ["sum", "max", "min"]


def entries_1d():
    return ["S(0)", "S(1)", "B"] + [f"P({k})" for k in KINDS]


def entries_2d():
    return ["S(0)", "S(1)", "B", "P(sum)"]


def local_shape(shape, layout, mesh):
    """Largest piece per dim; '?' where pieces differ between devices."""
    first = list(shape)
    last = list(shape)
    for axis, entry in enumerate(layout):
        if entry.startswith("S("):
            d = int(entry[2:-1])
            p = mesh[axis]
            first[d] = first[d] // p + (1 if first[d] % p else 0)
            last[d] = last[d] // p
    return ["?" if f != l else str(f) for f, l in zip(first, last)]


def tensor(shape):
    return "tensor<" + "x".join(str(s) for s in shape) + "xf32>"


def expected(src, dst):
    """CHECK lines for a change on one axis, from the boxing table."""
    if src.startswith("P(") and dst == "B":
        return [f"sbp.all_reduce {{{{.*}}}} reduction = {src[2:-1]}"]
    if src.startswith("P(") and dst.startswith("S("):
        return [f"sbp.reduce_scatter {{{{.*}}}} scatter_dim = {dst[2:-1]} "
                f"reduction = {src[2:-1]}"]
    if src.startswith("S(") and dst == "B":
        return [f"sbp.all_gather {{{{.*}}}} gather_dim = {src[2:-1]}"]
    if src.startswith("S(") and dst.startswith("S("):
        return [f"sbp.all_to_all {{{{.*}}}} split_dim = {dst[2:-1]} "
                f"concat_dim = {src[2:-1]}"]
    if src == "B" and dst.startswith("S("):
        return ["sbp.axis_index", "tensor.extract_slice"]
    if src == "B" and dst == "P(sum)":
        return ["sbp.axis_index", "arith.select"]
    if src.startswith("S(") and dst.startswith("P("):
        return ["linalg.fill", "tensor.insert_slice"]
    if src.startswith("P(") and dst.startswith("P("):
        lines = [f"sbp.all_reduce {{{{.*}}}} reduction = {src[2:-1]}"]
        if dst == "P(sum)":
            lines.append("arith.select")
        return lines
    return []  # B -> P(max) / P(min): nothing to do


def is_direct(src, dst, axis):
    """A one-axis change is a single table step unless a later axis splits
    the same dimension inside it (then its pieces are not contiguous)."""
    dims = {e[2:-1] for e in (src[axis], dst[axis]) if e.startswith("S(")}
    return not any(e.startswith("S(") and e[2:-1] in dims
                   for e in src[axis + 1:])


def emit(out, name, mesh, shape, src, dst):
    mesh_name = "m" + "x".join(map(str, mesh))
    src_attr = f"#sbp.nd<@{mesh_name}, [{', '.join(src)}]>"
    dst_attr = f"#sbp.nd<@{mesh_name}, [{', '.join(dst)}]>"
    changed = [a for a in range(len(mesh)) if src[a] != dst[a]]
    out.append(f"// CHECK-LABEL: func.func @{name}(")
    out.append(f"// CHECK-SAME: {tensor(local_shape(shape, src, mesh))}")
    out.append(f"// CHECK-SAME: -> ({tensor(local_shape(shape, dst, mesh))}")
    if len(changed) == 1 and is_direct(src, dst, changed[0]):
        lines = expected(src[changed[0]], dst[changed[0]])
        out.extend(f"// CHECK: {line}" for line in lines)
        if not lines:
            out.append("// CHECK-NEXT: return %arg0")
            return emit_function(out, name, shape, src_attr, dst_attr)
    out.append("// CHECK-NOT: sbp.boxing")
    out.append("// CHECK: return")
    emit_function(out, name, shape, src_attr, dst_attr)


def emit_function(out, name, shape, src_attr, dst_attr):
    out.append(f"func.func @{name}(%x: {tensor(shape)} "
               f"{{sbp.sharding = {src_attr}}})")
    out.append(f"    -> ({tensor(shape)} {{sbp.sharding = {dst_attr}}}) {{")
    out.append(f"  %0 = sbp.boxing %x {src_attr} -> {dst_attr} : {tensor(shape)}")
    out.append(f"  return %0 : {tensor(shape)}")
    out.append("}")
    out.append("")


def mangle(layout):
    return "_".join(e.replace("(", "").replace(")", "") for e in layout)


def main():
    out = ["sbp.mesh @m4 shape = [4]", "sbp.mesh @m2x2 shape = [2, 2]", ""]
    count = 0
    for src, dst in itertools.product(entries_1d(), repeat=2):
        if src != dst:
            emit(out, f"m4_{mangle([src])}_to_{mangle([dst])}", [4], [8, 12],
                 [src], [dst])
            count += 1
    for src, dst in itertools.product(["S(0)", "B", "P(sum)"], repeat=2):
        if src != dst:
            emit(out, f"uneven_{mangle([src])}_to_{mangle([dst])}", [4],
                 [6, 10], [src], [dst])
            count += 1
    layouts = list(itertools.product(entries_2d(), repeat=2))
    for src, dst in itertools.product(layouts, repeat=2):
        if src != dst:
            emit(out, f"m2x2_{mangle(src)}_to_{mangle(dst)}", [2, 2], [8, 12],
                 list(src), list(dst))
            count += 1
    print(f"// {count} boxings, generated by gen-boxing-table.py")
    print("\n".join(out))


main()
