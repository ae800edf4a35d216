"""`trajforge curate-sft`: the SFT curation Beam job."""

from pathlib import Path
from typing import Annotated

import typer

from trajforge.pipelines.commands import EXIT_OK, flags
from trajforge.pipelines.commands.beam_command import beam_args, job_errors
from trajforge.pipelines.commands.judge_options import JUDGE_DEFAULTS, KEY_ENV, judge_of
from trajforge.pipelines.console import console
from trajforge.pipelines.curate_sft.config import CurateConfig
from trajforge.schemas import counts
from trajforge.training.generators import GENERATORS, GeneratorSpec

DEFAULTS = CurateConfig()

GeneratorKind = Annotated[str, typer.Option(help=f"{GENERATORS.describe('; or ')}.")]
GeneratorUrl = Annotated[
    str | None, typer.Option(envvar="TRAJFORGE_GENERATOR_URL", help="The generator's base URL (…/v1), for endpoint.")
]
GeneratorModel = Annotated[
    str | None, typer.Option(envvar="TRAJFORGE_GENERATOR_MODEL", help="The generator's model id, for endpoint.")
]
GeneratorKeyEnv = Annotated[str, typer.Option(help=flags.key_env_help("an endpoint generator's"))]
GeneratorCheckpoint = Annotated[Path | None, typer.Option(help="Checkpoint folder for --generator checkpoint.")]
Candidates = Annotated[int, typer.Option(min=1, max=16, help="Candidates per query (best of N).")]
Threshold = Annotated[float, typer.Option(min=1.0, max=5.0, help="Queries whose best mean score is lower are dropped.")]
PerTrajectory = Annotated[int, typer.Option(min=1, help="Queries (in-loss turns) per trajectory at most.")]
Hint = Annotated[
    bool,
    typer.Option(
        help="Hint-conditioned rationalization: a model generator sees the real observation (its samples count "
        "as rationalized, not as rollouts)."
    ),
]


def curate_sft_command(
    ctx: typer.Context,
    input: flags.Input = "data/corpus",
    output: flags.Output = "data/sft",
    generator: GeneratorKind = GeneratorSpec.kind,
    generator_url: GeneratorUrl = None,
    generator_model: GeneratorModel = None,
    generator_key_env: GeneratorKeyEnv = GeneratorSpec.key_env,
    generator_checkpoint: GeneratorCheckpoint = None,
    judge: flags.Judge = JUDGE_DEFAULTS.kind,
    judge_url: flags.JudgeUrl = None,
    judge_model: flags.JudgeModel = None,
    judge_key_env: flags.JudgeKeyEnv = KEY_ENV,
    rubrics: flags.Rubrics = None,
    judge_timeout: flags.JudgeTimeout = JUDGE_DEFAULTS.timeout,
    candidates: Candidates = DEFAULTS.candidates,
    threshold: Threshold = DEFAULTS.threshold,
    per_trajectory: PerTrajectory = DEFAULTS.per_trajectory,
    hint: Hint = DEFAULTS.hint,
    seed: flags.Seed = DEFAULTS.seed,
    max_new_tokens: flags.MaxNewTokens = GeneratorSpec.max_new_tokens,
    workers: flags.Workers = None,
    verbose: flags.Verbose = False,
) -> None:
    """Curate SFT data (paper §3.3): for each query (an in-loss turn with its history), N candidates of the form
    <think>...</think><predicted_observation>...</predicted_observation>, judged on format, factuality,
    consistency, realism and quality; the best of N is kept when it reaches the threshold. Every query's scores
    go to OUTPUT/_scores.jsonl; system prompts vary over several templates, picked per sample. Beam flags go
    after `--`.

    --input: a build-corpus folder or URL (its cpt/ shards); --output: the SFT folder or URL (sft/ shards, scores,
    the manifest); --max-new-tokens: the longest candidate a model generator may write."""
    judge_spec = judge_of(locals())
    with job_errors(verbose):
        from trajforge.pipelines.curate_sft.pipeline import curate_sft

        checkpoint = str(generator_checkpoint) if generator_checkpoint else None
        spec = GeneratorSpec(generator, generator_url, generator_model, checkpoint, max_new_tokens, generator_key_env)
        config = CurateConfig(spec, judge_spec, candidates, threshold, per_trajectory, hint, seed)
        manifest = curate_sft(input, output, config, beam_args(ctx), workers, verbose)
    console.print(summary_line(manifest.counts, output), highlight=False, soft_wrap=True)
    raise typer.Exit(EXIT_OK)


def summary_line(c: dict[str, int], output: str) -> str:
    """Queries, the acceptance rate, and where the kept samples came from: model rollouts or rationalization."""
    read, written = c[counts.READ], c[counts.WRITTEN]
    rate = written / read if read else 0.0
    kept = counts.kinds(c, counts.KEPT)
    skipped = counts.total(c, counts.ROWS_SKIPPED)
    return (
        f"[bold]curate-sft[/]: {read} queries, {written} kept (acceptance {rate:.1%}), "
        f"{counts.kinds(c, counts.FILTERED).get(counts.BELOW_THRESHOLD, 0)} below the threshold; kept samples: "
        f"{kept.get('rollout', 0)} sampled from a model, {kept.get('rationalization', 0)} rationalized "
        f"({kept.get(counts.VERBATIM_REFERENCE, 0)} of all kept are the verbatim reference observation); "
        f"{skipped} corpus rows not for SFT (held out or CPT-only) -> {output}"
    )
