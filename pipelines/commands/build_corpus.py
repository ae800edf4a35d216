"""`trajforge build-corpus`: the Beam job from raw trajectories to masked CPT shards."""

from pathlib import Path
from typing import Annotated

import typer

from trajforge.curation.filters import FILTERS, FilterConfig
from trajforge.masking import load_policy
from trajforge.pipelines.build_corpus.config import BuildConfig
from trajforge.pipelines.commands import EXIT_OK, EXIT_REJECTED, flags
from trajforge.pipelines.commands.beam_command import beam_args, job_errors
from trajforge.pipelines.console import console
from trajforge.schemas import counts
from trajforge.schemas.formats import FORMATS
from trajforge.schemas.names import CPT_DIR, MANIFEST_NAME
from trajforge.schemas.registry import unknown_message
from trajforge.schemas.splits import SplitConfig
from trajforge.schemas.storage import join

MB = 1024 * 1024
DEFAULTS = BuildConfig()

InputFormat = Annotated[
    str, typer.Option(help=f"trajforge (raw segments or shards) or a foreign format: {', '.join(FORMATS)}.")
]
MaskingPolicy = Annotated[
    str, typer.Option(help="Masking policy: paper, information, or a YAML path (see masking/policies/).")
]
Disable = Annotated[
    list[str], typer.Option("--disable", help=f"Switch a filter off (repeatable): {', '.join(FILTERS)}.")
]
MinTurns = Annotated[int, typer.Option(min=0, help="Drop trajectories with fewer turns (0: keep all).")]
NearDedup = Annotated[bool, typer.Option(help="MinHash near-duplicate removal.")]
Redact = Annotated[bool, typer.Option(help="Replace secrets with typed placeholders.")]
ShardMb = Annotated[float, typer.Option(min=0.001, help="Target shard size in MB.")]
Incremental = Annotated[
    bool, typer.Option(help="Only inputs that are new or changed since the last build; shards are added.")
]
SftRlShare = Annotated[
    float,
    typer.Option(
        min=0.0,
        max=1.0,
        help="Share of the training tasks that feed only SFT and RL, kept out of CPT (the paper's disjoint "
        "pools; 0: every training task feeds every stage).",
    ),
]
Knowledge = Annotated[
    list[Path],
    typer.Option(
        "--knowledge",
        help="World-knowledge documents for CPT, a file or a folder (repeatable): plain text, Markdown, HTML, "
        "JSON Lines with a `text` field, man pages (roff, gzip'd or not). Each becomes a single-turn document "
        "wholly in the loss, CPT-only; a binary or non-UTF-8 file is rejected and named.",
    ),
]
KnowledgeShare = Annotated[
    float,
    typer.Option(
        min=0.0,
        max=1.0,
        help="The most of the CPT characters knowledge documents may take; past it, documents (in hash order) are "
        "dropped and counted. Default: no cap.",
    ),
]


def build_corpus_command(
    ctx: typer.Context,
    input: flags.Inputs = ["data/raw"],  # noqa: B006 - typer copies list defaults
    output: flags.Output = "data/corpus",
    input_format: InputFormat = DEFAULTS.input_format,
    column: flags.Column = DEFAULTS.input_column,
    masking_policy: MaskingPolicy = DEFAULTS.masking_policy,
    disable: Disable = [],  # noqa: B006
    min_turns: MinTurns = DEFAULTS.filters.min_turns,
    near_dedup: NearDedup = DEFAULTS.near_dedup,
    redact: Redact = DEFAULTS.redact,
    shard_mb: ShardMb = DEFAULTS.shard_bytes / MB,
    workers: flags.Workers = None,
    incremental: Incremental = False,
    held_out: flags.HeldOut = DEFAULTS.split.held_out,
    sft_rl_share: SftRlShare = DEFAULTS.split.sft_rl_share,
    split_seed: flags.SplitSeed = DEFAULTS.split.seed,
    held_out_family: flags.HeldOutFamily = [],  # noqa: B006
    knowledge: Knowledge = [],  # noqa: B006
    knowledge_share: KnowledgeShare = DEFAULTS.knowledge_share,
    verbose: flags.Verbose = False,
) -> None:
    """Build the CPT corpus with Apache Beam: validate (quarantining bad records), normalise, deduplicate (exact and
    MinHash), apply the paper's filters, redact secrets, compute per-turn statistics and loss masks, decide each TASK's
    split (held out for eval, or training; with --sft-rl-share, CPT-only or SFT/RL-only), recorded in every row and
    counted in the manifest, and write deterministic Arrow IPC stream shards with a manifest whose counts reconcile.

    --input: raw segments, or folders of them (repeatable; linked folders are followed); with a foreign
    --input-format, its files, or a dataset's parquet or arrow files (rows streamed, spread over the workers by
    file; a Hugging Face Hub dataset as hf://datasets/OWNER/NAME, through the Hub's cache). --output: the corpus
    folder (cpt/ shards, the manifest, rejections).

    Runs in-process by default; Beam flags after `--` (and only there) select another runner, e.g. `-- --runner=
    DataflowRunner --project=P --region=R`. Exit code 0: done; 1: done, and some records were rejected (see
    OUTPUT/_rejections.jsonl); 2: bad arguments, or the job could not run (one line says why)."""
    with job_errors(verbose):
        from trajforge.pipelines.build_corpus.pipeline import build_corpus

        split = SplitConfig(held_out, sft_rl_share, split_seed, tuple(held_out_family))
        config = BuildConfig(checked_format(input_format), checked_policy(masking_policy),
            filters=FilterConfig(disabled=tuple(disable), min_turns=min_turns), near_dedup=near_dedup, redact=redact,
            shard_bytes=int(shard_mb * MB), split=split, input_column=column,
            knowledge=tuple(str(p) for p in knowledge), knowledge_share=knowledge_share)  # fmt: skip
        manifest = build_corpus(input, output, config, beam_args(ctx), incremental, workers, verbose)
    _summary(manifest, output)
    raise typer.Exit(EXIT_REJECTED if manifest.counts.get(counts.REJECTED) else EXIT_OK)


def checked_format(input_format: str) -> str:
    if input_format not in ("trajforge", *FORMATS):
        raise ValueError(unknown_message("--input-format", [input_format], ["trajforge", *FORMATS]))
    return input_format


def checked_policy(policy: str) -> str:
    """The policy's name or path, once it is known to load (a PolicyError names the file and every problem)."""
    load_policy(policy)
    return policy


def _summary(manifest, output: str) -> None:
    c = manifest.counts
    console.print(
        f"[bold]build-corpus[/]: read {c[counts.READ]} = written {c[counts.WRITTEN]} + rejected "
        f"{c[counts.REJECTED]} + deduplicated {counts.total(c, counts.DEDUPLICATED)} + filtered "
        f"{counts.total(c, counts.FILTERED)}"
        f"{'' if manifest.reconciles() else '  [red](does not reconcile!)[/]'} -> {output}",
        highlight=False,
        soft_wrap=True,
    )
    # With knowledge documents, their own line below says what the "knowledge" and "chars" counts would.
    summarised = {counts.KNOWLEDGE, counts.CHARS} if c.get(counts.KNOWLEDGE_DOCUMENTS) else set()
    turns = f"{c.get(counts.TURNS_WRITTEN, 0):,} written, {c.get(counts.TURNS_IN_LOSS, 0):,} in the loss"
    console.print(f"  turns: {turns}")
    for group, found in counts.groups(c).items():
        if group not in summarised:
            console.print(f"  {group}: {', '.join(f'{kind} {n:,}' for kind, n in found.items())}", highlight=False)
    console.print(
        f"  {len(manifest.outputs)} shards under {join(output, CPT_DIR)}; manifest {join(output, MANIFEST_NAME)}",
        highlight=False,
        soft_wrap=True,
    )
    if c.get(counts.KNOWLEDGE_DOCUMENTS):
        console.print(
            f"  knowledge: {c[counts.KNOWLEDGE_DOCUMENTS]} documents, "
            f"{counts.kinds(c, counts.CHARS)[counts.KNOWLEDGE]:,} characters "
            f"({counts.knowledge_share(c):.1%} of CPT characters)"
        )
