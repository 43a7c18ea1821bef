#!/usr/bin/env python3
"""Records a PyTorch profiler (Kineto) trace of a small Llama-style training step on one NVIDIA
H200, with the step times measured around it, for inflect's replay check (docs/traces.md: a
replayed trace on its recorded hardware reproduces its measured step).

PREPARED, NOT YET RUN: no device was lent to the session that wrote it (2026-12-05). The next
session with a GPU runs it (a few minutes of device time), commits the outputs beside it and adds
the replay check (workloads/traces/kineto-llama-h200.yaml and a test) against measured.json.

The model: 8 decoder layers of a Llama-style transformer (RMSNorm, grouped-query attention
through F.scaled_dot_product_attention, SwiGLU MLP), hidden 2048, 16 heads (4 KV heads), FFN
5632, vocab 32000, seq 2048, micro-batch 4, bf16 weights and activations, AdamW (fused). It
changes no device setting. Steps 1-5 warm up; the profiler records steps 6-8 (schedule wait=1,
warmup=2, active=3 after five untimed steps), with record_shapes=True so that `--retime` can
re-time its GEMMs and flash attention. Then 20 more steps are timed with CUDA events without the
profiler: measured.json holds their mean, min and max (the profiler's own overhead is not in
them), and the profiled steps' CUDA-event times too.

Usage (on the device machine):  PYTHONUNBUFFERED=1 python3 record_kineto.py OUT_DIR
Outputs in OUT_DIR: llama_h200.pt.trace.json.gz (rank 0), measured.json, env.txt.
"""
import gzip
import json
import os
import shutil
import subprocess
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

OUT = sys.argv[1] if len(sys.argv) > 1 else "."
os.makedirs(OUT, exist_ok=True)
LAYERS, HIDDEN, HEADS, KV_HEADS, FFN, VOCAB, SEQ, MB = 8, 2048, 16, 4, 5632, 32000, 2048, 4
DEV = torch.device("cuda")


class RMSNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.w = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * self.w


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.hd = HIDDEN // HEADS
        self.n1, self.n2 = RMSNorm(HIDDEN), RMSNorm(HIDDEN)
        self.qkv = nn.Linear(HIDDEN, (HEADS + 2 * KV_HEADS) * self.hd, bias=False)
        self.proj = nn.Linear(HIDDEN, HIDDEN, bias=False)
        self.up = nn.Linear(HIDDEN, 2 * FFN, bias=False)
        self.down = nn.Linear(FFN, HIDDEN, bias=False)

    def forward(self, x):
        b, s, _ = x.shape
        q, k, v = self.qkv(self.n1(x)).split([HEADS * self.hd, KV_HEADS * self.hd, KV_HEADS * self.hd], dim=-1)
        q = q.view(b, s, HEADS, self.hd).transpose(1, 2)
        k = k.view(b, s, KV_HEADS, self.hd).transpose(1, 2).repeat_interleave(HEADS // KV_HEADS, dim=1)
        v = v.view(b, s, KV_HEADS, self.hd).transpose(1, 2).repeat_interleave(HEADS // KV_HEADS, dim=1)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, s, HIDDEN)
        x = x + self.proj(a)
        g, u = self.up(self.n2(x)).chunk(2, dim=-1)
        return x + self.down(F.silu(g) * u)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, HIDDEN)
        self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
        self.norm = RMSNorm(HIDDEN)
        self.head = nn.Linear(HIDDEN, VOCAB, bias=False)

    def forward(self, ids):
        x = self.emb(ids)
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.norm(x))


def main():
    torch.manual_seed(0)
    model = Model().to(DEV, dtype=torch.bfloat16)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    ids = torch.randint(0, VOCAB, (MB, SEQ), device=DEV)
    labels = torch.randint(0, VOCAB, (MB, SEQ), device=DEV)

    def step():
        loss = F.cross_entropy(model(ids).view(-1, VOCAB).float(), labels.view(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    def timed(n):
        times = []
        for _ in range(n):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            step()
            e.record()
            torch.cuda.synchronize()
            times.append(s.elapsed_time(e) / 1e3)
        return times

    timed(5)  # warm-up: allocator, cuBLAS heuristics, fused optimizer state
    trace_path = os.path.join(OUT, "llama_h200.pt.trace.json")
    profiled = []
    sched = torch.profiler.schedule(wait=1, warmup=2, active=3, repeat=1)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA],
                                schedule=sched, record_shapes=True,
                                on_trace_ready=lambda p: p.export_chrome_trace(trace_path)) as prof:
        for _ in range(6):
            profiled += timed(1)
            prof.step()
    with open(trace_path, "rb") as src, gzip.open(trace_path + ".gz", "wb") as dst:
        shutil.copyfileobj(src, dst)
    os.remove(trace_path)
    steady = timed(20)
    params = sum(p.numel() for p in model.parameters())
    json.dump({"schema": "inflect-kineto-step/1", "model": {"layers": LAYERS, "hidden": HIDDEN, "heads": HEADS,
                                                             "kv_heads": KV_HEADS, "ffn": FFN, "vocab": VOCAB,
                                                             "seq": SEQ, "micro_batch": MB, "params": params},
               "precision": "bf16", "optimizer": "AdamW (fused)",
               "profiled_steps_s": profiled, "steady_steps_s": steady,
               "steady_mean_s": sum(steady) / len(steady), "steady_min_s": min(steady), "steady_max_s": max(steady),
               "tokens_per_step": MB * SEQ, "recorded": time.strftime("%Y-%m-%d %H:%M:%S")},
              open(os.path.join(OUT, "measured.json"), "w"), indent=1)
    with open(os.path.join(OUT, "env.txt"), "w") as f:
        f.write(f"torch {torch.__version__} cuda {torch.version.cuda}\n{torch.cuda.get_device_properties(0)}\n")
        f.write(subprocess.run(["nvidia-smi", "-q"], capture_output=True, text=True).stdout)
    print(f"steady step {sum(steady) / len(steady) * 1e3:.3f} ms (min {min(steady) * 1e3:.3f}); trace {trace_path}.gz")


if __name__ == "__main__":
    main()
