#!/usr/bin/env python3
"""The tables of a ci/gpu run: `tfocl bench --json` rounds and
tests/bench/torch_ref.py rounds from the same machine and the same run,
pooled per case (the repetitions of every round together, then min, median,
max), side by side.

    gpu_compare.py --tfocl r1.json --tfocl r2.json --torch t1.json --torch t2.json \
        [--tfocl-md bench.md] [--md compare.md] [--json compare.json]

Prints (markdown):
  1. tfocl bench against its own references (host loops, OpenBLAS, the
     device's copy, raw OpenCL), pooled over the rounds;
  2. tfocl against PyTorch on the same device: ratio = tfocl's speed /
     PyTorch's (medians; > 1: tfocl is faster), and tfocl's median as a share
     of the device's measured ceiling (copy bandwidth, SGEMM rate, pinned
     host copies) where one applies;
  3. the ceilings, measured and from the datasheet.
Python standard library only.
"""
import argparse
import json
import statistics
import sys


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tfocl", action="append", default=[], help="a tfocl bench --json result (repeat per round)")
    ap.add_argument("--torch", action="append", default=[], help="a torch_ref.py result (repeat per round)")
    ap.add_argument("--tfocl-md", help="also write table 1 (tfocl bench) here")
    ap.add_argument("--md", help="also write tables 2 and 3 (against PyTorch, ceilings) here")
    ap.add_argument("--json", help="write the pooled comparison here")
    return ap.parse_args()


def load(paths, what):
    """The results that parse; a missing or broken file is reported, not fatal
    (a round cut short by the deadline leaves none)."""
    out = []
    for p in paths:
        try:
            with open(p) as f:
                out.append(json.load(f))
        except (OSError, ValueError) as e:
            print(f"gpu_compare: {what} {p}: {e}", file=sys.stderr)
    return out


def pool(series_list):
    reps = [v for s in series_list if s and s.get("available") for v in s.get("reps", []) if v is not None]
    if not reps:
        return {"available": False, "min": None, "median": None, "max": None, "n": 0}
    s = sorted(reps)
    return {"available": True, "min": s[0], "median": statistics.median(s), "max": s[-1], "n": len(s)}


def ratio(ours, ref, higher_is_better):
    if not ours["available"] or not ref["available"] or not ours["median"] or not ref["median"]:
        return None
    return ours["median"] / ref["median"] if higher_is_better else ref["median"] / ours["median"]


def fmt(v):
    if v is None:
        return "n/a"
    a = abs(v)
    return f"{v:.3g}" if a >= 1e5 else f"{v:.0f}" if a >= 100 else f"{v:.1f}" if a >= 10 else f"{v:.3g}"


def fmt_ratio(r):
    return "n/a" if r is None else f"{r:.2f}"


def torch_case(case):
    """tfocl bench measures MatMul on both GEMM paths (matmul/1024/own,
    matmul/1024/clblast); PyTorch has one (matmul/1024)."""
    head, _, last = case.rpartition("/")
    return head if last in ("own", "clblast") else case


def limit_for(case, unit, limits):
    """(ceiling in the row's unit, factor on tfocl's figure, ceiling's name)
    or None. copy/d2d counts bytes copied, the ceiling bytes read + written."""
    def get(key):
        v = limits.get(key)
        return v.get("value") if isinstance(v, dict) else None
    if unit == "GFLOP/s" and get("sgemm_GFLOPs"):
        return get("sgemm_GFLOPs"), 1.0, "SGEMM"
    if unit != "GB/s":
        return None
    if case.startswith(("elementwise/", "reduce/", "softmax/")) and get("copy_GBps"):
        return get("copy_GBps"), 1.0, "copy"
    if case == "copy/d2d" and get("copy_GBps"):
        return get("copy_GBps"), 2.0, "copy"
    if case.startswith("copy/h2d") and get("h2d_pinned_GBps"):
        return get("h2d_pinned_GBps"), 1.0, "pinned h2d"
    if case.startswith("copy/d2h") and get("d2h_pinned_GBps"):
        return get("d2h_pinned_GBps"), 1.0, "pinned d2h"
    return None


def main():
    args = parse_args()
    tfocl = load(args.tfocl, "tfocl bench")
    torch = load(args.torch, "torch_ref")
    torch_ok = [t for t in torch if t.get("available")]
    lines = []
    out = lines.append

    # ---- 1. tfocl bench against its own references -----------------------
    rows, order = {}, []
    for r in tfocl:
        for row in r.get("rows", []):
            key = (row["case"], row["reference"])
            if key not in rows:
                rows[key] = {"case": row["case"], "unit": row["unit"], "reference": row["reference"],
                             "higher_is_better": row["higher_is_better"], "kernel": row.get("kernel", False),
                             "note": row["note"], "ours": [], "ref": []}
                order.append(key)
            rows[key]["ours"].append(row["ours"])
            rows[key]["ref"].append(row["ref"])
    device = tfocl[0]["device"] if tfocl else "?"
    failures = sum(r.get("failures", 0) for r in tfocl)
    out(f"## tfocl bench on {device}\n")
    if not tfocl:
        out("No tfocl bench result (see the log).\n")
    else:
        blas = tfocl[0].get("blas") or "unavailable"
        out(f"{len(tfocl)} round(s) pooled; host references use {tfocl[0].get('host_threads')} threads; "
            f"BLAS: {blas}. ratio = tfocl's speed / the reference's (medians; > 1: tfocl is faster).\n")
        out("| case | metric | tfocl min | tfocl median | tfocl max | reference | ref median | ratio | note |")
        out("| --- | --- | ---: | ---: | ---: | --- | ---: | ---: | --- |")
        for key in order:
            r = rows[key]
            o, f = pool(r["ours"]), pool(r["ref"])
            out(f"| {r['case']} | {r['unit']} | {fmt(o['min'])} | {fmt(o['median'])} | {fmt(o['max'])} | "
                f"{r['reference']} | {fmt(f['median'])} | {fmt_ratio(ratio(o, f, r['higher_is_better']))} | "
                f"{r['note']} |")
        if failures:
            out(f"\n{failures} tfocl bench case(s) FAILED (see the log).")
        out("")

    tfocl_lines = lines
    lines = []
    out = lines.append

    # ---- 2. tfocl against PyTorch -------------------------------------------
    limits = next((t.get("limits") or {} for t in torch_ok if t.get("limits")), {})
    trows = {}
    for t in torch_ok:
        for row in t.get("rows", []):
            e = trows.setdefault(row["case"], {"series": [], "note": row["note"]})
            e["series"].append(row["ours"])
    if torch_ok:
        t0 = torch_ok[0]
        out(f"## tfocl against PyTorch on {t0.get('device')}\n")
        out(f"PyTorch: {t0.get('framework')}; settings {json.dumps(t0.get('settings', {}))}; "
            f"{len(torch_ok)} round(s) pooled, alternating with tfocl bench's.")
    else:
        why = torch[0].get("why") if torch else "torch_ref.py gave no result"
        out("## tfocl against PyTorch\n")
        out(f"PyTorch reference unavailable: {why}")
    out("ratio = tfocl's speed / PyTorch's (medians; > 1: tfocl is faster); "
        "of limit = tfocl's median / the measured ceiling (section 3).\n")
    out("| case | metric | tfocl min | tfocl median | tfocl max | PyTorch min | PyTorch median | PyTorch max "
        "| tfocl / PyTorch | tfocl of limit | PyTorch note |")
    out("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    compared, seen = [], set()
    for key in order:
        r = rows[key]
        if r["case"] in seen:  # one line per case (a case with two references has two rows above)
            continue
        seen.add(r["case"])
        o = pool(r["ours"])
        t = trows.get(torch_case(r["case"]))
        p = pool(t["series"]) if t else pool([])
        q = ratio(o, p, r["higher_is_better"])
        lim = limit_for(r["case"], r["unit"], limits)
        share = None
        if lim and o["median"] is not None:
            share = o["median"] * lim[1] / lim[0]
        note = t["note"] if t else ("reference unavailable" if not torch_ok else "no PyTorch case")
        out(f"| {r['case']} | {r['unit']} | {fmt(o['min'])} | {fmt(o['median'])} | {fmt(o['max'])} | "
            f"{fmt(p['min'])} | {fmt(p['median'])} | {fmt(p['max'])} | {fmt_ratio(q)} | "
            f"{'' if share is None else f'{100 * share:.0f}% of {lim[2]}'} | {note} |")
        compared.append({"case": r["case"], "unit": r["unit"], "higher_is_better": r["higher_is_better"],
                         "kernel": r["kernel"], "tfocl": o, "torch": p, "torch_case": torch_case(r["case"]),
                         "ratio": q, "of_limit": share})
    worst = [c for c in compared if c["kernel"] and c["ratio"] is not None]
    if worst:
        w = min(worst, key=lambda c: c["ratio"])
        out(f"\nSlowest tfocl kernel relative to PyTorch: {w['case']} ({w['ratio']:.2f} x).")
    out("")

    # ---- 3. ceilings ----------------------------------------------------------
    out("## Ceilings\n")
    if limits and "error" not in limits:
        out("| ceiling | value | how |")
        out("| --- | ---: | --- |")
        for key, v in limits.items():
            if key != "datasheet" and isinstance(v, dict):
                out(f"| {key} | {fmt(v['value'])} {v['unit']} | {v['what']} |")
        sheet = limits.get("datasheet")
        if sheet:
            out(f"\nDatasheet: {sheet['source']} (about {sheet['fp32_tflops'] * 1e3:.0f} GFLOP/s and "
                f"{sheet['memory_tbps'] * 1e3:.0f} GB/s).")
    elif limits:
        out(f"Not measured: {limits['error']}")
    else:
        out("Not measured (needs the PyTorch reference).")
    out("")

    print("\n".join(tfocl_lines + lines))
    for path, part in ((args.tfocl_md, tfocl_lines), (args.md, lines)):
        if path:
            with open(path, "w") as f:
                f.write("\n".join(part) + "\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": device, "rounds": {"tfocl": len(tfocl), "torch": len(torch_ok)},
                       "torch_available": bool(torch_ok),
                       "torch_why": None if torch_ok else (torch[0].get("why") if torch else "no result"),
                       "tfocl_failures": failures, "rows": compared, "limits": limits}, f, indent=1)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
