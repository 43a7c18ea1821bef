#!/usr/bin/env python3
"""Reads one recording of record_h200.py (results.json + telemetry.csv) and prints the figures the
device catalog takes from it (calibration/devices/h200-sxm.yaml) and the summary in README.md.
Standard library only, so it runs anywhere:  python3 summarize.py 2026-12-04/
"""
import bisect
import csv
import json
import math
import os
import statistics as st
import sys

D = sys.argv[1] if len(sys.argv) > 1 else "2026-12-04"
R = json.load(open(os.path.join(D, "results.json")))
S = R["sections"]
ROWS = [r for r in csv.DictReader(line for line in open(os.path.join(D, "telemetry.csv")) if not line.startswith("#"))]
TS = [float(r["t_mono"]) for r in ROWS]

# torch dispatches a matmul in ~14.5 us and a copy in ~6 us on this host: a call that took less
# than this measured the host, not the kernel.
HOST_BOUND_S = 20e-6


def window(t0, t1):
    return ROWS[bisect.bisect_left(TS, t0):bisect.bisect_right(TS, t1)]


def telemetry(t0, t1):
    w = window(t0, t1)
    e = (int(w[-1]["energy_mj"]) - int(w[0]["energy_mj"])) / 1e3 / (float(w[-1]["t_mono"]) - float(w[0]["t_mono"]))
    return {"power_w": e, "sm_mhz": st.mean(int(r["sm_mhz"]) for r in w), "temp_max_c": max(int(r["temp_c"]) for r in w),
            "power_capped": any(int(r["reasons"]) & 4 for r in w)}


def fit_tau(t0, T_from, T_to, span=6.0):
    """Single time constant of T(t) = T_to + (T_from - T_to) exp(-t/tau), by grid search (20 ms steps)."""
    pts = [(float(r["t_mono"]) - t0, int(r["temp_c"])) for r in window(t0, t0 + span)]
    err = lambda tau: sum((T - (T_to + (T_from - T_to) * math.exp(-t / tau))) ** 2 for t, T in pts)  # noqa: E731
    return min((err(i * 0.02), i * 0.02) for i in range(1, 500))[1]


def main():
    out = []
    p = out.append
    idle = telemetry(S["idle"]["t_begin"], S["idle"]["t_end"])
    heat = S["heat_cool"]["heat"]
    h = telemetry(heat["t_begin"], heat["t_end"])
    cool = S["heat_cool"]["cool"]
    t_idle = st.mean(int(r["temp_c"]) for r in window(S["idle"]["t_begin"], S["idle"]["t_end"]))
    t_hot = st.mean(int(r["temp_c"]) for r in window(heat["t_end"] - 20, heat["t_end"]))
    r_th = (t_hot - t_idle) / (h["power_w"] - idle["power_w"])
    tau_h = fit_tau(heat["t_begin"], t_idle, t_hot)
    tau_c = fit_tau(cool["t_begin"], t_hot, st.mean(int(r["temp_c"]) for r in window(cool["t_end"] - 10, cool["t_end"])))
    p(f"idle (CUDA context, P0): {idle['power_w']:.1f} W at {idle['sm_mhz']:.0f} MHz, {t_idle:.1f} C")
    p(f"sustained 8192^3 bf16 randn, {heat['seconds']:.0f} s: {heat['mean_rate'] / 1e12:.1f} TFLOP/s, "
      f"{h['power_w']:.1f} W, {h['sm_mhz']:.0f} MHz mean, power-capped {h['power_capped']}, last 20 s {t_hot:.1f} C")
    p(f"thermal: dT/dP = ({t_hot:.1f} - {t_idle:.1f}) / ({h['power_w']:.1f} - {idle['power_w']:.1f}) = {r_th:.4f} C/W; "
      f"tau heating {tau_h:.2f} s, cooling {tau_c:.2f} s; C = tau/R = {(tau_h + tau_c) / 2 / r_th:.1f} J/C")
    for r in S["power_by_shape"]["rows"]:
        t = telemetry(r["t_begin"], r["t_end"])
        p(f"power {r['dtype']} {r['m']}x{r['n']}x{r['k']} {r['data']}: {r['mean_tflops']:.1f} TFLOP/s, {t['power_w']:.1f} W, "
          f"{t['sm_mhz']:.0f} MHz, capped {t['power_capped']}")
    m = S["power_memory_bound"]
    t = telemetry(m["t_begin"], m["t_end"])
    pj = (t["power_w"] - idle["power_w"]) / m["mean_rate"] * 1e12
    p(f"copy 4 GiB sustained: {m['mean_gbps']:.0f} GB/s, {t['power_w']:.1f} W, {t['sm_mhz']:.0f} MHz -> "
      f"({t['power_w']:.1f} - {idle['power_w']:.1f}) W / bandwidth = {pj:.1f} pJ per byte moved")
    for r in S["gpt_microbatch"]["runs"]:
        if "error" in r:
            continue
        t = telemetry(r["t_begin"], r["t_end"])
        p(f"gpt-1.7b seq 512 mb {r['micro_batch']} {'graphed' if r['graphed'] else 'eager  '}: {r['tokens_per_s']:.0f} tokens/s, "
          f"step {r['step_wall_s'] * 1e3:.1f} ms (fwd+bwd {r['fwd_bwd_gpu_s'] * 1e3:.1f}, optimizer {r['optimizer_gpu_s'] * 1e3:.1f}), "
          f"{t['power_w']:.0f} W, {t['sm_mhz']:.0f} MHz, {t['temp_max_c']} C max, capped {t['power_capped']}")
    p("")
    p("# catalog points (host-bound calls excluded)")
    for r in S["gemm_bf16"]["rows"]:
        if r["kind"] == "square":
            ex = r["seconds"] < HOST_BOUND_S
            p(f"  bf16 {r['m']}x{r['n']}x{r['k']} rate {r['tflops']:.1f}TFLOP/s {'EXCLUDED host-bound' if ex else ''}")
    for dt in ("fp16", "fp8", "tf32", "fp32"):
        for r in S["gemm_other"][dt]:
            if "kind" not in r:
                p(f"  {dt} {r['m']}x{r['n']}x{r['k']} rate {r['tflops']:.1f}TFLOP/s {'EXCLUDED host-bound' if r['seconds'] < HOST_BOUND_S else ''}")
    for r in S["attention"]["rows"]:
        if r["causal"]:
            p(f"  attention causal seq {r['seq']} flops {r['fwd_flops']:.6g} rate {r['fwd_tflops']:.1f}TFLOP/s (bwd {r['bwd_tflops']:.1f})")
    for r in S["memory"]["rows"]:
        if r["kernel"] == "copy":
            p(f"  copy bytes {r['bytes_moved']} rate {r['gbps'] / 1e3:.3f}TB/s {'EXCLUDED' if r['seconds'] < HOST_BOUND_S or r['bytes_moved'] <= 60e6 else ''}")
    print("\n".join(out))


if __name__ == "__main__":
    main()
