#!/usr/bin/env python3
"""Records calibration traces on one NVIDIA H200: GEMM sweeps by shape and precision, memory
bandwidth by size, fused attention, sustained power / clock / temperature under GEMM and
streaming load (heating and cooling curves), power by GEMM shape, and a GPT-1.7B training
micro-batch sweep (seq 512, micro-batch 1, 2, 4, 8) with its power and temperature.

It changes no device setting (no clock locks, no power limits): what it records is what the
device does at its default limit. Telemetry comes from NVML (nvidia-ml-py) in a separate process
sampling every 20 ms, so sampling never takes the GIL from the process that launches kernels;
nvidia-smi at 200 ms runs beside it as a second record. Every section catches its own errors and
the results file is rewritten after each section, so a failure or a time-out keeps what ran.

Usage (on the device machine):  python3 record_h200.py OUT_DIR [--quick] [--only=SECTION,...]
Outputs in OUT_DIR: env.txt, results.json, telemetry.csv, smi.csv (see README.md beside this).
"""
import json
import math
import os
import subprocess
import sys
import time
import traceback

OUT = sys.argv[1] if len(sys.argv) > 1 else "."
QUICK = "--quick" in sys.argv
ONLY = next((a.split("=", 1)[1].split(",") for a in sys.argv if a.startswith("--only=")), None)
SCALE = 0.25 if QUICK else 1.0  # --quick shortens the sustained sections (a smoke run)

RESULTS = {"schema": "inflect-h200-traces/1", "sections": {}, "markers": [], "errors": {}}


def now():
    return time.monotonic()


def mark(name):
    """A section boundary, on the same clock (CLOCK_MONOTONIC) the sampler writes."""
    RESULTS["markers"].append({"name": name, "t_mono": now(), "t_wall": time.time()})
    print(f"[{time.strftime('%H:%M:%S')}] {name}", flush=True)


def save():
    with open(os.path.join(OUT, "results.json.tmp"), "w") as f:
        json.dump(RESULTS, f, indent=1)
    os.replace(os.path.join(OUT, "results.json.tmp"), os.path.join(OUT, "results.json"))


def section(name):
    def wrap(fn):
        def run(*a, **k):
            if ONLY is not None and name not in ONLY and name != "env":
                return
            mark(name + ":begin")
            try:
                RESULTS["sections"][name] = fn(*a, **k)
            except Exception:  # keep going: one broken section must not cost the others
                RESULTS["errors"][name] = traceback.format_exc()
                print(RESULTS["errors"][name], flush=True)
            mark(name + ":end")
            save()
        return run
    return wrap


# ---------------------------------------------------------------- telemetry sampler (own process)
SAMPLER = r'''
import sys, time, os
import pynvml as N
path, stop, interval = sys.argv[1], sys.argv[2], float(sys.argv[3])
N.nvmlInit()
h = N.nvmlDeviceGetHandleByIndex(0)
fids = []
for name in ("NVML_FI_DEV_POWER_INSTANT", "NVML_FI_DEV_MEMORY_TEMP", "NVML_FI_DEV_POWER_AVERAGE"):
    if hasattr(N, name):
        fids.append((name, getattr(N, name)))
kinds = {0: "dVal", 1: "uiVal", 2: "ulVal", 3: "ullVal", 4: "sllVal", 5: "siVal"}
def field_values():
    out = []
    if not fids:
        return out
    try:
        vals = N.nvmlDeviceGetFieldValues(h, [f for _, f in fids])
        for v in vals:
            if v.nvmlReturn != 0:
                out.append("")
            else:
                out.append(str(getattr(v.value, kinds.get(v.valueType, "uiVal"))))
    except Exception:
        out = [""] * len(fids)
    return out
def reasons():
    for fn in ("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"):
        if hasattr(N, fn):
            try:
                return getattr(N, fn)(h)
            except Exception:
                pass
    return -1
f = open(path, "w")
f.write("t_mono,power_mw,energy_mj,sm_mhz,mem_mhz,temp_c,util_pct,reasons," + ",".join(n for n, _ in fids) + "\n")
last_flush = time.monotonic()
while not os.path.exists(stop):
    t = time.monotonic()
    try:
        p = N.nvmlDeviceGetPowerUsage(h)
        e = N.nvmlDeviceGetTotalEnergyConsumption(h)
        sm = N.nvmlDeviceGetClockInfo(h, N.NVML_CLOCK_SM)
        mem = N.nvmlDeviceGetClockInfo(h, N.NVML_CLOCK_MEM)
        tc = N.nvmlDeviceGetTemperature(h, N.NVML_TEMPERATURE_GPU)
        u = N.nvmlDeviceGetUtilizationRates(h).gpu
        row = [f"{t:.4f}", str(p), str(e), str(sm), str(mem), str(tc), str(u), str(reasons())] + field_values()
        f.write(",".join(row) + "\n")
    except Exception as ex:
        f.write(f"# {t:.4f} error {ex!r}\n")
    if t - last_flush > 1.0:
        f.flush()
        last_flush = t
    time.sleep(max(0.0, interval - (time.monotonic() - t)))
f.close()
'''


def start_recorders():
    stop = os.path.join(OUT, ".stop")
    procs = []
    with open("/tmp/sampler.py", "w") as f:
        f.write(SAMPLER)
    procs.append(subprocess.Popen([sys.executable, "/tmp/sampler.py", os.path.join(OUT, "telemetry.csv"), stop, "0.02"]))
    fields = "timestamp,power.draw,clocks.sm,clocks.mem,temperature.gpu,temperature.memory,clocks_throttle_reasons.active,utilization.gpu"
    smi = open(os.path.join(OUT, "smi.csv"), "w")
    procs.append(subprocess.Popen(["nvidia-smi", f"--query-gpu={fields}", "--format=csv,nounits", "-lms", "200"],
                                  stdout=smi, stderr=subprocess.STDOUT))
    return stop, procs


def nvml_energy_mj():
    try:
        import pynvml as N
        N.nvmlInit()
        return N.nvmlDeviceGetTotalEnergyConsumption(N.nvmlDeviceGetHandleByIndex(0))
    except Exception:
        return None


# ---------------------------------------------------------------- timing helpers
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

DEV = "cuda"


def time_op(fn, min_time=0.03, warmup=2, max_iters=500):
    """Mean seconds per call over a CUDA-event-timed loop of at least min_time (after warm-up)."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    fn()
    e.record()
    e.synchronize()
    t1 = s.elapsed_time(e) / 1e3
    n = max(3, min(max_iters, math.ceil(min_time / max(t1, 1e-7))))
    s.record()
    for _ in range(n):
        fn()
    e.record()
    e.synchronize()
    return s.elapsed_time(e) / 1e3 / n, n


def sustain(fn, seconds, batch, work_per_call):
    """Runs fn for `seconds`, in batches of `batch` calls; returns the rate timeline and totals."""
    timeline = []
    e0 = nvml_energy_mj()
    t_start = now()
    calls = 0
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    gpu_s = 0.0
    while now() - t_start < seconds:
        s.record()
        for _ in range(batch):
            fn()
        e.record()
        e.synchronize()
        dt = s.elapsed_time(e) / 1e3
        gpu_s += dt
        calls += batch
        timeline.append([round(now(), 4), round(batch * work_per_call / dt, 1)])
    t_end = now()
    e1 = nvml_energy_mj()
    out = {"seconds": t_end - t_start, "calls": calls, "mean_rate": calls * work_per_call / gpu_s,
           "timeline_t_mono_rate": timeline, "t_begin": t_start, "t_end": t_end}
    if e0 is not None and e1 is not None:
        out["avg_power_w"] = (e1 - e0) / 1e3 / (t_end - t_start)
    return out


# ---------------------------------------------------------------- sections
@section("env")
def env():
    p = torch.cuda.get_device_properties(0)
    info = {"torch": torch.__version__, "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(),
            "name": p.name, "sms": p.multi_processor_count, "total_memory": p.total_memory,
            "capability": [p.major, p.minor], "flash_sdp": torch.backends.cuda.flash_sdp_enabled()}
    with open(os.path.join(OUT, "env.txt"), "w") as f:
        f.write(json.dumps(info, indent=1) + "\n")
        for args in (["nvidia-smi"], ["nvidia-smi", "-q"], ["nvidia-smi", "-q", "-d", "SUPPORTED_CLOCKS"]):
            f.write(f"\n==== {' '.join(args)}\n")
            f.write(subprocess.run(args, capture_output=True, text=True).stdout)
    return info


def _idle(seconds):
    torch.cuda.synchronize()
    e0, t0 = nvml_energy_mj(), now()
    time.sleep(seconds)
    e1, t1 = nvml_energy_mj(), now()
    return {"seconds": t1 - t0, "avg_power_w": (e1 - e0) / 1e3 / (t1 - t0) if e0 is not None else None,
            "t_begin": t0, "t_end": t1}


idle = section("idle")(_idle)
idle_end = section("idle_end")(_idle)


def gemm_fn(m, n, k, dtype):
    if dtype == "fp8":
        a = torch.randn(m, k, device=DEV).to(torch.float8_e4m3fn)
        b = torch.randn(n, k, device=DEV).to(torch.float8_e4m3fn)
        one = torch.tensor(1.0, device=DEV)
        return lambda: torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    dt = {"bf16": torch.bfloat16, "fp16": torch.float16, "tf32": torch.float32, "fp32": torch.float32}[dtype]
    a = torch.randn(m, k, device=DEV, dtype=dt)
    b = torch.randn(k, n, device=DEV, dtype=dt)
    c = torch.empty(m, n, device=DEV, dtype=dt)
    return lambda: torch.matmul(a, b, out=c)


def set_tf32(on):
    torch.backends.cuda.matmul.allow_tf32 = on
    torch.backends.cudnn.allow_tf32 = on


def gemm_shapes():
    squares = [256, 512, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384]
    shapes = [("square", s, s, s) for s in squares]
    # A transformer layer's GEMMs (tokens T = micro-batch x sequence, hidden h, FFN 4h):
    # QKV T x 3h x h, output projection T x h x h, FC1 T x 4h x h, FC2 T x h x 4h.
    for h in (2304, 4096, 8192, 12288):
        for T in (512, 1024, 2048, 4096, 8192, 16384):
            shapes += [("qkv", T, 3 * h, h), ("proj", T, h, h), ("fc1", T, 4 * h, h), ("fc2", T, h, 4 * h)]
    shapes.append(("mamf-best-h100", 2048, 2048, 13312))
    return shapes


@section("gemm_bf16")
def gemm_bf16():
    set_tf32(False)
    rows = []
    for kind, m, n, k in gemm_shapes():
        fn = gemm_fn(m, n, k, "bf16")
        t, iters = time_op(fn)
        rows.append({"kind": kind, "m": m, "n": n, "k": k, "seconds": t, "iters": iters,
                     "tflops": 2 * m * n * k / t / 1e12, "t_end": now()})
        del fn
    torch.cuda.empty_cache()
    return {"dtype": "bf16", "data": "randn", "layout": "C[m,n] = A[m,k] @ B[k,n], row-major, torch.matmul(out=)",
            "rows": rows}


@section("gemm_other")
def gemm_other():
    out = {}
    sizes = {"fp16": [1024, 2048, 4096, 8192, 16384], "fp8": [1024, 2048, 4096, 8192, 16384],
             "tf32": [1024, 2048, 4096, 8192], "fp32": [1024, 2048, 4096, 8192]}
    for dtype, ss in sizes.items():
        set_tf32(dtype == "tf32")
        rows = []
        try:
            for s in ss:
                fn = gemm_fn(s, s, s, dtype)
                t, iters = time_op(fn, min_time=0.03, warmup=1)
                rows.append({"m": s, "n": s, "k": s, "seconds": t, "iters": iters, "tflops": 2 * s ** 3 / t / 1e12})
                del fn
            # the transformer shapes of one mid-size model, so each precision has non-square points
            for kind, m, n, k in [("fc1", 4096, 16384, 4096), ("fc2", 4096, 4096, 16384), ("qkv", 2048, 12288, 4096)]:
                fn = gemm_fn(m, n, k, dtype)
                t, iters = time_op(fn, min_time=0.03, warmup=1)
                rows.append({"kind": kind, "m": m, "n": n, "k": k, "seconds": t, "iters": iters,
                             "tflops": 2 * m * n * k / t / 1e12})
                del fn
        except Exception:
            out[dtype + "_error"] = traceback.format_exc()
        out[dtype] = rows
        torch.cuda.empty_cache()
    set_tf32(False)
    out["note"] = "fp8: torch._scaled_mm e4m3 x e4m3 -> bf16, unit scales, B column-major; tf32: fp32 tensors with allow_tf32"
    return out


@section("memory")
def memory():
    rows = []
    for mib in (1, 4, 16, 64, 256, 1024, 4096):
        n = mib << 20
        src = torch.empty(n, dtype=torch.uint8, device=DEV).random_(0, 255)
        dst = torch.empty_like(src)
        t, iters = time_op(lambda: dst.copy_(src), min_time=0.02)
        rows.append({"kernel": "copy", "array_bytes": n, "bytes_moved": 2 * n, "seconds": t, "iters": iters,
                     "gbps": 2 * n / t / 1e9})
        del src, dst
        a = torch.randn(n // 2, device=DEV, dtype=torch.bfloat16)  # n bytes per array, as copy
        b = torch.randn_like(a)
        c = torch.empty_like(a)
        t, iters = time_op(lambda: torch.add(a, b, alpha=0.5, out=c), min_time=0.02)
        rows.append({"kernel": "triad", "array_bytes": a.numel() * 2, "bytes_moved": 3 * a.numel() * 2, "seconds": t,
                     "iters": iters, "gbps": 3 * a.numel() * 2 / t / 1e9})
        del a, b, c
    torch.cuda.empty_cache()
    return {"rows": rows, "note": "copy = dst.copy_(src) (read + write); triad = torch.add(a, b, alpha, out=c) in bf16 (2 reads + 1 write)"}


@section("attention")
def attention():
    rows = []
    d = 128
    for causal in (False, True):
        for seq, batch, heads in ((1024, 16, 16), (2048, 8, 16), (4096, 4, 16), (8192, 2, 16), (16384, 1, 16)):
            q = torch.randn(batch, heads, seq, d, device=DEV, dtype=torch.bfloat16, requires_grad=True)
            k = torch.randn_like(q, requires_grad=True)
            v = torch.randn_like(q, requires_grad=True)
            fwd_flops = 4 * batch * heads * seq * seq * d / (2 if causal else 1)
            t_f, it_f = time_op(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal), min_time=0.03)
            o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            g = torch.randn_like(o)
            t_b, it_b = time_op(lambda: torch.autograd.grad(o, (q, k, v), g, retain_graph=True), min_time=0.03)
            rows.append({"batch": batch, "heads": heads, "seq": seq, "head_dim": d, "causal": causal,
                         "fwd_flops": fwd_flops, "fwd_seconds": t_f, "fwd_tflops": fwd_flops / t_f / 1e12,
                         "bwd_flops": 2.5 * fwd_flops, "bwd_seconds": t_b, "bwd_tflops": 2.5 * fwd_flops / t_b / 1e12})
            del q, k, v, o, g
    torch.cuda.empty_cache()
    return {"rows": rows, "note": "F.scaled_dot_product_attention bf16 (flash backend where enabled); forward FLOPs 4*b*h*s^2*d "
            "(halved when causal); backward counted as 2.5x forward (FlashAttention-2's convention)"}


@section("heat_cool")
def heat_cool(heat_s, cool_s):
    fn = gemm_fn(8192, 8192, 8192, "bf16")
    heat = sustain(fn, heat_s, 20, 2 * 8192 ** 3)
    torch.cuda.synchronize()
    t0, e0 = now(), nvml_energy_mj()
    time.sleep(cool_s)
    t1, e1 = now(), nvml_energy_mj()
    del fn
    torch.cuda.empty_cache()
    return {"gemm": "8192x8192x8192 bf16 randn", "heat": heat,
            "cool": {"t_begin": t0, "t_end": t1, "avg_power_w": (e1 - e0) / 1e3 / (t1 - t0) if e0 is not None else None}}


@section("power_by_shape")
def power_by_shape(seconds):
    rows = []
    cases = [("bf16", 16384, 16384, 16384, "randn"), ("bf16", 8192, 8192, 8192, "randn"),
             ("bf16", 8192, 8192, 8192, "zeros"), ("bf16", 4096, 4096, 4096, "randn"),
             ("bf16", 2048, 2048, 13312, "randn"), ("bf16", 2048, 9216, 2304, "randn"),
             ("bf16", 512, 6912, 2304, "randn"), ("fp8", 8192, 8192, 8192, "randn")]
    for dtype, m, n, k, data in cases:
        fn = gemm_fn(m, n, k, dtype)
        if data == "zeros":
            a = torch.zeros(m, k, device=DEV, dtype=torch.bfloat16)
            b = torch.zeros(k, n, device=DEV, dtype=torch.bfloat16)
            c = torch.empty(m, n, device=DEV, dtype=torch.bfloat16)
            fn = lambda: torch.matmul(a, b, out=c)  # noqa: E731
        t1, _ = time_op(fn, min_time=0.01, warmup=1)
        batch = max(1, min(200, int(0.03 / t1)))
        r = sustain(fn, seconds, batch, 2 * m * n * k)
        r.pop("timeline_t_mono_rate")
        r.update({"dtype": dtype, "m": m, "n": n, "k": k, "data": data, "mean_tflops": r["mean_rate"] / 1e12})
        rows.append(r)
        del fn
    torch.cuda.empty_cache()
    return {"rows": rows}


@section("power_memory_bound")
def power_memory_bound(seconds):
    n = 4 << 30
    src = torch.empty(n, dtype=torch.uint8, device=DEV).random_(0, 255)
    dst = torch.empty_like(src)
    r = sustain(lambda: dst.copy_(src), seconds, 5, 2 * n)
    r["timeline_t_mono_rate"] = r["timeline_t_mono_rate"][::10]
    r.update({"kernel": "copy 4 GiB", "mean_gbps": r["mean_rate"] / 1e9})
    del src, dst
    torch.cuda.empty_cache()
    return r


# ---------------------------------------------------------------- GPT-1.7B micro-batch sweep
class Block(torch.nn.Module):
    def __init__(self, h, heads, ffn):
        super().__init__()
        self.heads = heads
        self.ln1 = torch.nn.LayerNorm(h)
        self.qkv = torch.nn.Linear(h, 3 * h)
        self.proj = torch.nn.Linear(h, h)
        self.ln2 = torch.nn.LayerNorm(h)
        self.fc1 = torch.nn.Linear(h, ffn)
        self.fc2 = torch.nn.Linear(ffn, h)

    def forward(self, x):
        b, t, h = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.heads, h // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, t, h)
        x = x + self.proj(a)
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x)), approximate="tanh"))


class GPT(torch.nn.Module):
    def __init__(self, layers, h, heads, ffn, vocab, seq):
        super().__init__()
        self.emb = torch.nn.Embedding(vocab, h)
        self.pos = torch.nn.Embedding(seq, h)
        self.blocks = torch.nn.ModuleList([Block(h, heads, ffn) for _ in range(layers)])
        self.ln_f = torch.nn.LayerNorm(h)

    def forward(self, ids, labels):
        x = self.emb(ids) + self.pos.weight[: ids.shape[1]]
        for blk in self.blocks:
            x = blk(x)
        logits = F.linear(self.ln_f(x), self.emb.weight)  # tied embeddings
        return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), labels.view(-1))


@section("gpt_microbatch")
def gpt_microbatch(seconds):
    cfg = dict(layers=24, h=2304, heads=24, ffn=9216, vocab=51200, seq=512)
    seqs_per_step = 32
    torch.manual_seed(0)
    with torch.device(DEV):
        model = GPT(**cfg).to(torch.bfloat16)
    params = sum(p.numel() for p in model.parameters())
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5, fused=True)
    runs = []
    for graphed in (False, True):
        for mb in (1, 2, 4, 8):
            try:
                ids = torch.randint(0, cfg["vocab"], (mb, cfg["seq"]), device=DEV)
                labels = torch.randint(0, cfg["vocab"], (mb, cfg["seq"]), device=DEV)
                torch.cuda.reset_peak_memory_stats()
                model.__dict__.pop("forward", None)  # undo an earlier make_graphed_callables
                fwd_bwd = model
                if graphed:
                    fwd_bwd = torch.cuda.make_graphed_callables(model, (ids, labels))
                n_micro = seqs_per_step // mb

                def step():
                    for _ in range(n_micro):
                        fwd_bwd(ids, labels).backward()

                ev = [torch.cuda.Event(enable_timing=True) for _ in range(3)]
                step()
                opt.step()
                opt.zero_grad(set_to_none=False)
                torch.cuda.synchronize()
                e0, t0 = nvml_energy_mj(), now()
                steps, fb, op = 0, 0.0, 0.0
                while now() - t0 < seconds or steps < 2:
                    ev[0].record()
                    step()
                    ev[1].record()
                    opt.step()
                    opt.zero_grad(set_to_none=False)
                    ev[2].record()
                    ev[2].synchronize()
                    fb += ev[0].elapsed_time(ev[1]) / 1e3
                    op += ev[1].elapsed_time(ev[2]) / 1e3
                    steps += 1
                t1, e1 = now(), nvml_energy_mj()
                wall = (t1 - t0) / steps
                runs.append({"graphed": graphed, "micro_batch": mb, "micro_batches_per_step": n_micro, "steps": steps,
                             "step_wall_s": wall, "fwd_bwd_gpu_s": fb / steps, "optimizer_gpu_s": op / steps,
                             "fwd_bwd_per_micro_batch_s": fb / steps / n_micro,
                             "tokens_per_s": seqs_per_step * cfg["seq"] / wall,
                             "avg_power_w": (e1 - e0) / 1e3 / (t1 - t0) if e0 is not None else None,
                             "peak_memory_bytes": torch.cuda.max_memory_allocated(), "t_begin": t0, "t_end": t1})
                print(runs[-1], flush=True)
                del fwd_bwd
                model.__dict__.pop("forward", None)
            except Exception:
                runs.append({"graphed": graphed, "micro_batch": mb, "error": traceback.format_exc()})
                print(runs[-1]["error"], flush=True)
            torch.cuda.empty_cache()
    return {"model": cfg, "params": params, "sequences_per_step": seqs_per_step, "precision": "bf16 parameters, "
            "gradients and AdamW states (torch fused AdamW), no fp32 master copy", "runs": runs,
            "note": "one step = sequences_per_step/micro_batch forward+backward passes (gradient accumulation), then "
                    "one optimizer step; graphed = torch.cuda.make_graphed_callables over the whole model (forward "
                    "and backward replayed as CUDA graphs, no CPU launch overhead)"}


def main():
    os.makedirs(OUT, exist_ok=True)
    stop, procs = start_recorders()
    t_all = now()
    try:
        torch.cuda.init()
        torch.zeros(1, device=DEV)
        env()
        idle(10 * SCALE)
        heat_cool(45 * SCALE, 30 * SCALE)
        gemm_bf16()
        gemm_other()
        memory()
        attention()
        power_by_shape(4 * SCALE)
        power_memory_bound(6 * SCALE)
        gpt_microbatch(6 * SCALE)
        idle_end(5 * SCALE)
    finally:
        RESULTS["total_seconds"] = now() - t_all
        save()
        open(stop, "w").close()
        time.sleep(0.5)
        for p in procs:
            try:
                p.terminate()
                p.wait(timeout=5)
            except Exception:
                pass
        os.remove(stop)
    print(f"done in {now() - t_all:.1f} s; errors in: {list(RESULTS['errors'])}", flush=True)


if __name__ == "__main__":
    main()
