"""`trajforge build-corpus`: the Beam job from raw trajectories to masked CPT shards."""

from pathlib import Path

import typer

from curation.filters import FILTERS, FilterConfig
from masking import PolicyError, load_policy
from pipelines.commands import EXIT_OK, EXIT_REJECTED, EXIT_USAGE
from pipelines.commands.beam_command import VERBOSE_HELP, beam_args, job_errors, quiet_logging
from pipelines.console import console
from schemas.formats import FORMATS
from schemas.names import CPT_DIR, MANIFEST_NAME
from schemas.storage import join


def build_corpus_command(
    ctx: typer.Context,
    input: list[str] = typer.Option(
        ["data/raw"], "--input", "-i", help="Raw segments, or folders of them (repeatable; a path or a URL)."
    ),
    output: str = typer.Option(
        "data/corpus", "--output", "-o", help="Corpus folder (a path or a URL): cpt/ shards, manifest, rejections."
    ),
    input_format: str = typer.Option(
        "trajforge", help=f"trajforge (raw segments or shards) or a foreign format: {', '.join(FORMATS)}."
    ),
    policy: str = typer.Option(
        "paper", help="Masking policy: paper, information, or a YAML path (see masking/policies/)."
    ),
    disable: list[str] = typer.Option([], "--disable", help=f"Switch a filter off (repeatable): {', '.join(FILTERS)}."),
    min_turns: int = typer.Option(2, min=0, help="Drop trajectories with fewer turns (0: keep all)."),
    near_dedup: bool = typer.Option(True, help="MinHash near-duplicate removal."),
    redact: bool = typer.Option(True, help="Replace secrets with typed placeholders."),
    shard_mb: float = typer.Option(64.0, min=0.001, help="Target shard size in MB."),
    workers: int | None = typer.Option(
        None, min=1, help="Worker processes of the in-process runner (default: the cores)."
    ),
    incremental: bool = typer.Option(
        False, help="Only inputs that are new or changed since the last build; shards are added."
    ),
    held_out: float = typer.Option(
        0.1, min=0.0, max=1.0, help="Share of TASKS held out: no training stage reads them, eval reads only them."
    ),
    sft_rl_share: float = typer.Option(
        0.0,
        min=0.0,
        max=1.0,
        help="Share of the training tasks that feed only SFT and RL, kept out of CPT (the paper's disjoint "
        "pools; 0: every training task feeds every stage).",
    ),
    split_seed: int = typer.Option(0, help="Seed of the task split's hash."),
    knowledge: list[Path] = typer.Option(
        [],
        "--knowledge",
        help="World-knowledge documents for CPT, a file or a folder (repeatable): plain text, Markdown, HTML, "
        "JSON Lines with a `text` field, man pages (roff, gzip'd or not). Each becomes a single-turn document "
        "wholly in the loss, CPT-only; a binary or non-UTF-8 file is rejected and named.",
    ),
    knowledge_share: float = typer.Option(
        1.0,
        min=0.0,
        max=1.0,
        help="The most of the CPT characters knowledge documents may take; past it, documents (in hash order) are "
        "dropped and counted. Default: no cap.",
    ),
    verbose: bool = typer.Option(False, "--verbose", help=VERBOSE_HELP),
) -> None:
    """Build the CPT corpus with Apache Beam: validate (quarantining bad records), normalise, deduplicate
    (exact and MinHash), apply the paper's filters, redact secrets, compute per-turn statistics and loss masks,
    decide each TASK's split (held out for eval, or training; with --sft-rl-share, CPT-only or SFT/RL-only),
    recorded in every row and counted in the manifest, and write deterministic Arrow IPC stream shards with a
    manifest whose counts reconcile.

    Runs in-process by default; Beam flags after `--` (and only there) select another runner, e.g.
    `trajforge build-corpus -i gs://b/raw -o gs://b/corpus -- --runner=DataflowRunner --project=P --region=R`.
    Exit code 0: done; 1: done, and some records were rejected (see OUTPUT/_rejections.jsonl); 2: bad
    arguments, or the job could not run (one line says why).
    """
    from pipelines.build_corpus.config import BuildConfig

    quiet_logging(verbose)
    from pipelines.build_corpus.pipeline import build_corpus
    from schemas.splits import SplitConfig

    try:
        if input_format not in ("trajforge", *FORMATS):
            raise ValueError(f"unknown --input-format {input_format!r}")
        filters = FilterConfig(disabled=tuple(disable), min_turns=min_turns)
        load_policy(policy)
    except (ValueError, PolicyError) as exc:
        console.print(f"[red]{exc}[/]")
        raise typer.Exit(EXIT_USAGE) from exc
    config = BuildConfig(
        input_format=input_format,
        policy=policy,
        filters=filters,
        near_dedup=near_dedup,
        redact=redact,
        shard_bytes=int(shard_mb * 1024 * 1024),
        split=SplitConfig(held_out=held_out, sft_rl_share=sft_rl_share, seed=split_seed),
        knowledge=tuple(str(p) for p in knowledge),
        knowledge_share=knowledge_share,
    )
    with job_errors(verbose):
        manifest = build_corpus(input, output, config, beam_args(ctx), incremental, workers, verbose)
    _summary(manifest, output)
    raise typer.Exit(EXIT_REJECTED if manifest.counts.get("rejected") else EXIT_OK)


def _summary(manifest, output: str) -> None:
    c = manifest.counts
    groups: dict[str, int] = {}
    for key, n in c.items():
        head = key.split(".", 1)[0]
        if head in ("deduplicated", "filtered"):
            groups[head] = groups.get(head, 0) + n
    console.print(
        f"[bold]build-corpus[/]: read {c['read']} = written {c['written']} + rejected {c['rejected']} + "
        f"deduplicated {groups.get('deduplicated', 0)} + filtered {groups.get('filtered', 0)}"
        f"{'' if manifest.reconciles() else '  [red](does not reconcile!)[/]'} -> {output}",
        highlight=False,
        soft_wrap=True,
    )
    # With knowledge documents, their own line below says what the "knowledge" and "chars" counts would.
    summarised = {"knowledge", "chars"} if c.get("knowledge.documents") else set()
    by_head: dict[str, list[str]] = {}
    for key, n in c.items():
        if "." in key and key.split(".", 1)[0] not in summarised:
            head, name = key.split(".", 1)
            by_head.setdefault(head, []).append(f"{name} {n:,}")
    console.print(f"  turns: {c.get('turns_written', 0):,} written, {c.get('turns_in_loss', 0):,} in the loss")
    for head, parts in by_head.items():
        console.print(f"  {head}: {', '.join(parts)}", highlight=False)
    console.print(
        f"  {len(manifest.outputs)} shards under {join(output, CPT_DIR)}; manifest {join(output, MANIFEST_NAME)}",
        highlight=False,
        soft_wrap=True,
    )
    if c.get("knowledge.documents"):
        share = c["chars.knowledge"] / max(1, c["chars.knowledge"] + c.get("chars.trajectories", 0))
        console.print(
            f"  knowledge: {c['knowledge.documents']} documents, {c['chars.knowledge']:,} characters "
            f"({share:.1%} of CPT characters)"
        )
