"""generate's key/value cache: transformers' DynamicCache (each new token concatenated onto every layer's whole
cache) against trajforge's growing cache (training/sampling.py: each token written in place into a buffer with
room), on the same batch, greedy, in the same run: seconds per generate, the ratio, and whether the tokens agree.

    .venv/bin/python benchmarks/kv_cache_growth.py [--init smollm2] [--rows 16] [--prompt 700] [--new 64] [--repeats 2]

The shape is an agent's turn (agent-eval, agent-rl rollouts, the world model's answers): a batch of `--rows`
prompts of `--prompt` tokens (random ids; a quarter of the rows left-padded by a seventh), `--new` tokens each.
The two caches alternate, `--repeats` times each, and each row's figure is its fastest run. Load on the machine
slows both; its load average is printed.
"""

import argparse
import os
import time

from results_record import add_results_option, start_record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--init", default="smollm2", help="the model: smollm2 or a checkpoint folder")
    parser.add_argument("--rows", type=int, default=16)
    parser.add_argument("--prompt", type=int, default=700, help="prompt tokens per row")
    parser.add_argument("--new", type=int, default=64, help="tokens generated per row")
    parser.add_argument("--repeats", type=int, default=2)
    add_results_option(parser)
    args = parser.parse_args()
    record = start_record("kv-cache-growth", args)

    import torch
    from transformers import AutoModelForCausalLM, DynamicCache

    from trajforge.training.model import resolve_init
    from trajforge.training.sampling import growing_cache

    model = AutoModelForCausalLM.from_pretrained(resolve_init(args.init)).eval()
    torch.manual_seed(0)
    ids = torch.randint(100, model.config.vocab_size - 100, (args.rows, args.prompt))
    mask = torch.ones_like(ids)
    mask[: args.rows // 4, : args.prompt // 7] = 0

    def generated(cache) -> tuple[float, torch.Tensor]:
        started = time.perf_counter()
        with torch.no_grad():
            out = model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=args.new, min_new_tokens=args.new,
                                 do_sample=False, cache=cache, pad_token_id=0)  # fmt: skip
        return time.perf_counter() - started, out

    caches = {"transformers DynamicCache (baseline)": DynamicCache, "growing cache": growing_cache}
    seconds: dict[str, list[float]] = {name: [] for name in caches}
    tokens = {}
    for _ in range(args.repeats):
        for name, make in caches.items():
            took, tokens[name] = generated(make())
            seconds[name].append(took)
    print(f"{args.init}: {args.rows} rows x {args.prompt} prompt tokens, {args.new} new tokens, greedy; "
          f"load average {os.getloadavg()[0]:.2f}; fastest of {args.repeats}")  # fmt: skip
    base = min(seconds[next(iter(caches))])
    for name in caches:
        print(f"  {name:<38} {min(seconds[name]):7.1f} s   {base / min(seconds[name]):.2f}x")
    same = torch.equal(*tokens.values())
    print(f"  the same tokens: {same}")
    record.write({name: min(s) for name, s in seconds.items()} | {"same_tokens": same, "runs": seconds})


if __name__ == "__main__":
    main()
