"""Scoring through an inference server (issue 28): Duet's server scorer vs lm-evaluation-harness's
`local-completions` backend vs a bare concurrent client, against one llama.cpp server.

    .venv/bin/python bench/models_server.py [--items 24] [--block 8] [--concurrency 4] [--repeats 3]
                                            [--lm-eval-repeats 1] [--forms answers] [--threads 1]

The server: llama-cpp-python's OpenAI-compatible server (`python -m llama_cpp.server`, the `server`
group) running the embedded SmolLM2-135M-Instruct GGUF dequantised to float32 on the CPU, started
here by inference/llama_serve.py as the tests start it. It runs one request at a time (a lock around
the model); the --concurrency requests every side keeps in flight overlap only the HTTP and the
client's own work with the server's.

Same items (paper 003's design, seed 0, bench/scoring.py's `prompts`), same answers (the paper's
" Yes"/" No"; --forms for more), same server, measured side by side in one run: the items are cut
into blocks of --block, every block is scored by each side in turn (the order alternating between
ours → bare → lm-eval and lm-eval → ours → bare: the bare client replays what ours sent on that
block), --repeats times (lm-eval: the first --lm-eval-repeats of them; its margin is wide and each
of its passes takes three of ours), and the best wall-clock time per (side, block) is kept. The CPU
seconds of the server process and of this process (the client) are shown too, and the prompt tokens
the server evaluated (the part of each prompt its key/value cache did not hold, from its log).

* ours     — Duet's ServerScorer.score (inference/scorers/server.py), then summarise(): per item
             the server's tokenize endpoint for the start token, the prompt and prompt + each
             answer, ONE echoed completion of the prompt (`echo`, `logprobs=1`, `max_tokens=1`: every prompt token's
             log p, i.e. the perplexity, and the top next token) and, per one-token answer, one
             completion forced by `logit_bias` (its log p before the bias, no echo);
* lm-eval  — EleutherAI's `local-completions` (lm_eval 0.4.13, `num_concurrent` = --concurrency,
             `batch_size` 1, the embedded model's own tokenizer, `tokenized_requests=False` since
             llama-cpp-python's server takes no token ids): loglikelihood(start token + prompt,
             answer) for every answer — one echoed completion of context + answer each — and
             loglikelihood_rolling(prompt) for the perplexity, one more echoed completion;
* bare     — a plain httpx client sending exactly the POSTs ours sent on the block (tokenize and
             completions, recorded as ours sent them), all at once under the same bound, reading
             nothing: the limit of what the server allows for Duet's requests.

So ours asks for one echo per item and lm-eval for 1 + answers (3 with " Yes"/" No"). That is the
point of the comparison: llama-cpp-python writes an echoed completion's log-probabilities in Python,
sorting the whole vocabulary (49,152 tokens) once per prompt token (2-3 s for a 55-token prompt
on an idle core, up to 10 s under load, most of it in that sort), while a forced one-token completion costs about
0.08 s (the prompt's key/value cache is reused from the echo before it).

lm-eval's reading of the echo is corrected for this server (LlamaCppCompletions below, the only
change): llama-cpp-python leaves a prompt's leading BOS out of the echo, so lm-eval's own slice
(token_logprobs[ctxlen:-1]) is one token late: unmodified, every one-token answer comes back as
log p = 0 (an empty sum) when the context starts with the BOS, as SmolLM2's start token is; and
where the greedy next token ends the text the server generates none, so the slice's -1 cuts a token
of the continuation. The adapter finds the dropped BOS by the echo's length (checked against the
server's prompt token count), ends the slice before the generated tokens the server reports
(usage.completion_tokens), and leaves out the null llama-cpp-python writes for the first echoed
token, so lm-eval's rolling log-likelihood lacks that one token's log p (Duet fills it by one forced
request per first token, cached; the comparison adds it back). The requests sent are lm-eval's own.

Checks: ours / lm-eval ≥ 1.5, ours / bare ≥ 0.9 (items per wall-clock second); max |Δ log p| of
every (item, answer) between ours and lm-eval, which read the same server two ways (a forced
completion vs an echo), ≤ 1e-3 (the server scorer's tolerance, docs/models.md).

Measured (`.venv/bin/python bench/models_server.py`, the defaults: 24 items, 3 blocks of 8,
concurrency 4, best of 3 for ours and bare, lm-eval once; 14 minutes) on a shared 2-vCPU AMD EPYC VM
with other jobs running (load average 2-4), the server on 1 thread, llama-cpp-python 0.3.16,
lm-eval 0.4.13 (docs/models.md, "Through an inference server", has the details):
  ours / lm-eval 3.56 (>= 1.5; CPU seconds 3.39), ours / bare 1.06 (>= 0.9; CPU seconds 0.94),
  max |Δ log p| (' Yes', ' No') vs lm-eval 5.01e-06 (<= 1e-3); 24 echoed completions for ours,
  72 for lm-eval; lm-eval without its perplexity requests would still be 2.00 x slower.
Two earlier runs on the same machine (best of 1 and of 2): ours / lm-eval 3.67 and 3.14, ours / bare
1.03 and 0.90 (0.8985: missed), CPU seconds 0.99 and 1.00. Ours and bare send byte-identical
requests, so that ratio's spread is the machine's noise (an echo's cost alone varies 2-10 s under
load); Duet's own work per score() call is about 0.05 s (the server's model, version and settings)
against about 30 s of server time per block of 8.

Needs the `server` and `bench` dependency groups; downloads nothing (HF_HUB_OFFLINE=1).
"""
from __future__ import annotations

import argparse
import asyncio
import logging
import math
import os
import re
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("TQDM_DISABLE", "1")  # no progress bars from lm-eval
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "studyserver.settings")

import django  # noqa: E402

django.setup()  # inference.services (the embedded model's name) reads Django's settings

import httpx  # noqa: E402
from lm_eval.api.instance import Instance  # noqa: E402
from lm_eval.models.openai_completions import LocalCompletionsAPI  # noqa: E402

from bench.scoring import check, prompts  # noqa: E402
from inference import llama_serve  # noqa: E402
from inference.scorers import AnswerSet, LoadConfig, Request, build, summarise  # noqa: E402
from inference.scorers import client as http  # noqa: E402
from inference.scorers.loading import resolve_source  # noqa: E402
from inference.services import EMBEDDED_GGUF, EMBEDDED_SOURCE  # noqa: E402

SIDES = ("ours", "bare", "lm-eval")
ORDERS = (("ours", "bare", "lm-eval"), ("lm-eval", "ours", "bare"))  # bare replays what ours sent on the block


class LlamaCppCompletions(LocalCompletionsAPI):
    """lm-eval's local-completions with its echo read as llama-cpp-python writes it (the module's
    docstring says why); counts the completions it reads."""

    answered = 0

    @staticmethod
    def parse_logprobs(outputs, tokens=None, ctxlens=None, **kwargs):
        out = []
        for answer in outputs if isinstance(outputs, list) else [outputs]:
            LlamaCppCompletions.answered += 1
            for choice, ids, ctxlen in zip(sorted(answer["choices"], key=lambda c: c["index"]), tokens, ctxlens,
                                           strict=True):
                lp, usage = choice["logprobs"], answer.get("usage") or {}
                generated = usage.get("completion_tokens", 1)  # 0 where the greedy next token ended the text
                dropped = len(ids) + generated - len(lp["token_logprobs"])  # the BOS left out of the echo, or none
                if dropped not in (0, 1) or usage.get("prompt_tokens") not in (None, len(ids)):
                    raise ValueError(f"lm-eval's tokens ({len(ids)}) and the server's echo "
                                     f"({len(lp['token_logprobs'])} entries, usage {usage}) disagree")
                end = len(lp["token_logprobs"]) - generated
                pairs = [(v, top) for v, top in zip(lp["token_logprobs"][ctxlen - dropped:end],
                                                    lp["top_logprobs"][ctxlen - dropped:end]) if v is not None]
                out.append((math.fsum(v for v, _ in pairs), all(v >= max(top.values()) for v, top in pairs)))
        return out


@contextmanager
def recording(sent: list):
    """Every request Duet's HTTP layer sends, appended to `sent` as (method, path, body)."""
    original = http.ServerClient.request

    async def request(self, method, path, body=None, *, retry=True):
        sent.append((method, path, body))
        return await original(self, method, path, body, retry=retry)

    http.ServerClient.request = request
    try:
        yield sent
    finally:
        http.ServerClient.request = original


def bare_client(url: str, sent: list, concurrency: int):
    """Replay the POSTs in `sent` at once, at most `concurrency` in flight; read nothing."""
    posts = [(path, body) for method, path, body in sent if method == "POST"]

    async def replay():
        limit = asyncio.Semaphore(concurrency)
        pool = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
        async with httpx.AsyncClient(base_url=url, timeout=600, limits=pool) as client:
            async def one(path, body):
                async with limit:
                    (await client.post(path, json=body)).raise_for_status()

            await asyncio.gather(*(one(path, body) for path, body in posts))

    return lambda: asyncio.run(replay())


def cpu_seconds(pid: int) -> float:
    """The server process's user + system CPU seconds, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def evaluated(log: Path, offset: int) -> tuple[int, int]:
    """Prompt tokens the server evaluated (its log's "remaining N prompt tokens to eval": the part of
    a prompt its key/value cache did not already hold) since `offset`, and the log's new end."""
    text = log.read_bytes()[offset:]
    return sum(int(n) for n in re.findall(rb"remaining (\d+) prompt tokens to eval", text)), offset + len(text)


def ours(scorer, requests: list[Request]):
    results = scorer.score(requests)
    for r in results:
        summarise(r, "yes")
    return results


def lm_eval_side(lm, texts: list[str], answers: list[str], part: range, spent: dict):
    """lm-eval's loglikelihood of every answer and loglikelihood_rolling of every prompt of `part`."""
    ll = [Instance("loglikelihood", {}, (llama_serve.START_TOKEN + texts[i], a), n)
          for n, (i, a) in enumerate((i, a) for i in part for a in answers)]
    rolling = [Instance("loglikelihood_rolling", {}, (texts[i],), n) for n, i in enumerate(part)]
    started = time.perf_counter()
    answer_ll = lm.loglikelihood(ll, disable_tqdm=True)
    middle = time.perf_counter()
    rolled = lm.loglikelihood_rolling(rolling, disable_tqdm=True)
    spent["answers"] = spent.get("answers", 0.0) + middle - started
    spent["rolling"] = spent.get("rolling", 0.0) + time.perf_counter() - middle
    return answer_ll, rolled


def tokenizer_folder(folder: Path) -> str:
    """The embedded model's tokenizer (read from its GGUF, as the hf scorer reads it), saved where
    lm-eval's AutoTokenizer.from_pretrained finds it."""
    from transformers import AutoTokenizer

    AutoTokenizer.from_pretrained(resolve_source(EMBEDDED_SOURCE, EMBEDDED_GGUF),
                                  gguf_file=EMBEDDED_GGUF).save_pretrained(folder)
    return str(folder)


def run(args, url: str, pid: int, log: Path, tmp: Path) -> list[bool]:
    texts = prompts(args.items)
    answer_set = AnswerSet.yes_no(forms=args.forms)
    answers = [t for form in answer_set.surface_forms() for t in form]
    scorer = build("server", LoadConfig(source=EMBEDDED_SOURCE), answers=answer_set, prompt_format="raw",
                   batch_size=args.block, server={"urls": [url], "start_token": llama_serve.START_TOKEN,
                                                  "concurrency": args.concurrency})
    model = httpx.get(f"{url}/v1/models").json()["data"][0]["id"]
    lm = LlamaCppCompletions(base_url=f"{url}/v1/completions", model=model, tokenizer=tokenizer_folder(tmp / "tok"),
                             tokenizer_backend="huggingface", tokenized_requests=False,
                             num_concurrent=args.concurrency, batch_size=1, max_retries=3, timeout=600)
    # warm-up, untimed: ours checks logit_bias once and asks the first token's log p once (both kept
    # for the run, as a worker's scorer keeps them); lm-eval loads its tokenizer's state
    ours(scorer, [Request(key=-1, text=texts[0])])
    lm_eval_side(lm, texts, answers[:1], range(1), {})

    blocks = [range(s, min(s + args.block, len(texts))) for s in range(0, len(texts), args.block)]
    best = {(side, b): (math.inf, math.inf) for side in SIDES for b in range(len(blocks))}
    outputs: dict = {}
    sent: dict[int, list] = {}
    requests = {"ours": 0, "bare": 0, "lm-eval": 0}
    fed = {"ours": 0, "bare": 0, "lm-eval": 0}
    _, offset = evaluated(log, 0)
    lm_spent: dict = {}
    for repeat in range(args.repeats):
        for b, part in enumerate(blocks):
            for side in ORDERS[(repeat * len(blocks) + b) % len(ORDERS)]:
                if side == "lm-eval" and repeat >= args.lm_eval_repeats:
                    continue
                wall, cpu, server_cpu = time.perf_counter(), time.process_time(), cpu_seconds(pid)
                answered = LlamaCppCompletions.answered
                if side == "ours":
                    sent[b] = []
                    with recording(sent[b]):
                        outputs[side, b] = ours(scorer, [Request(key=i, text=texts[i]) for i in part])
                    count = len(sent[b])
                elif side == "bare":
                    bare_client(url, sent[b], args.concurrency)()
                    count = sum(method == "POST" for method, _, _ in sent[b])
                else:
                    outputs[side, b] = lm_eval_side(lm, texts, answers, part, lm_spent)
                    count = LlamaCppCompletions.answered - answered
                seconds = time.perf_counter() - wall
                cpu_used = time.process_time() - cpu + cpu_seconds(pid) - server_cpu
                best[side, b] = (min(best[side, b][0], seconds), min(best[side, b][1], cpu_used))
                tokens, offset = evaluated(log, offset)
                if repeat == 0:
                    requests[side] += count
                    fed[side] += tokens
                print(f"  repeat {repeat + 1} block {b + 1}/{len(blocks)} {side:8s} {seconds:7.1f} s wall "
                      f"{cpu_used:7.1f} s CPU  ({count} requests, {tokens} prompt tokens evaluated)", flush=True)

    wall = {side: sum(best[side, b][0] for b in range(len(blocks))) for side in SIDES}
    cpu = {side: sum(best[side, b][1] for b in range(len(blocks))) for side in SIDES}
    rate = {side: len(texts) / wall[side] for side in SIDES}
    mine = [r for b in range(len(blocks)) for r in outputs["ours", b]]
    theirs = [x for b in range(len(blocks)) for x in outputs["lm-eval", b][0]]
    rolled = [x for b in range(len(blocks)) for x in outputs["lm-eval", b][1]]
    gap = max(abs(mine[i].logprobs[a] - theirs[i * len(answers) + j][0])
              for i in range(len(texts)) for j, a in enumerate(answers))
    # lm-eval's rolling sum lacks the first prompt token (null in llama-cpp-python's echo); ours holds
    # it (a forced request per first token, cached on the scorer): compared where every prompt has the same
    firsts = list(scorer.first_token_cache.values())
    rolling_gap = (max(abs(-r.nll_sum - (x + firsts[0])) for r, x in zip(mine, rolled, strict=True))
                   if len(firsts) == 1 else math.nan)
    echoes = sum(p == "/v1/completions" and body.get("echo") for entries in sent.values() for _, p, body in entries)

    print(f"\n{len(texts)} items in {len(blocks)} blocks of {args.block}, answers {answers}, concurrency "
          f"{args.concurrency}, best of {args.repeats} (lm-eval: {min(args.lm_eval_repeats, args.repeats)}), "
          f"the server on {args.threads} thread(s)")
    for side in SIDES:
        print(f"  {side:8s} {rate[side]:6.3f} items/s   {wall[side]:7.1f} s wall-clock   {cpu[side]:7.1f} s CPU "
              f"(server + client)   {requests[side]:4d} requests   {fed[side]:5d} prompt tokens evaluated")
    share = lm_spent["answers"] / (lm_spent["answers"] + lm_spent["rolling"])
    print(f"  echoed completions: ours {echoes}, lm-eval {requests['lm-eval']} (all of its requests); lm-eval's "
          f"time: {100 * share:.0f} % answers, {100 * (1 - share):.0f} % perplexity")
    met = [
        check("ours / lm-eval (items per wall-clock s)", rate["ours"] / rate["lm-eval"], 1.5, True),
        check("ours / bare (items per wall-clock s)", rate["ours"] / rate["bare"], 0.9, True),
        check(f"max |Δ log p| {answers} vs lm-eval", gap, 1e-3, False, ".2e"),
    ]
    print(f"  {'ours / lm-eval, CPU seconds (information)':44s} {cpu['lm-eval'] / cpu['ours']:.2f}")
    print(f"  {'ours / bare, CPU seconds (information)':44s} {cpu['bare'] / cpu['ours']:.2f}")
    print(f"  {'ours / lm-eval answers alone (information)':44s} {rate['ours'] / rate['lm-eval'] * share:.2f}  "
          "(lm-eval's time less its perplexity requests)")
    print(f"  max |Δ| prompt log-likelihood vs lm-eval rolling + the first token's: {rolling_gap:.2e}")
    return met


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=24)
    parser.add_argument("--block", type=int, default=8, help="items per timed block")
    parser.add_argument("--concurrency", type=int, default=4,
                        help="requests in flight, every side (Duet's default per server)")
    parser.add_argument("--repeats", type=int, default=3, help="timed passes over every block, ours and bare")
    parser.add_argument("--lm-eval-repeats", type=int, default=1,
                        help="timed passes over every block, lm-eval (the first ones; its margin is wide and it "
                             "takes three times as long)")
    parser.add_argument("--forms", default="answers", choices=("answers", "cases", "all"),
                        help="answer forms scored (paper 003's: answers, i.e. ' Yes'/' No')")
    parser.add_argument("--threads", type=int, default=1, help="the server's threads")
    args = parser.parse_args()
    if min(args.items, args.block, args.concurrency, args.repeats, args.lm_eval_repeats, args.threads) < 1:
        parser.error("--items, --block, --concurrency, --repeats, --lm-eval-repeats and --threads must be at least 1")
    for name in ("lm_eval", "lm-eval", "httpx", "transformers"):
        logging.getLogger(name).setLevel(logging.ERROR)
    started = time.perf_counter()
    import llama_cpp
    import lm_eval

    print(f"llama-cpp-python {llama_cpp.__version__}, lm-eval {lm_eval.__version__}, {os.cpu_count()} CPUs, "
          f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="duet-bench-") as tmp:
        served = llama_serve.start(llama_serve.f32_gguf(), log=Path(tmp) / "server.log", threads=args.threads)
        try:
            met = run(args, served.url, served.process.pid, served.log, Path(tmp))
        finally:
            served.stop()
    print(f"\n{sum(met)} of {len(met)} targets met  ({time.perf_counter() - started:.0f} s wall-clock, load average "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())})")


if __name__ == "__main__":
    main()
