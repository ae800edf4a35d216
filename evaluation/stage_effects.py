"""What each training stage did, read off one evaluation over held-out tasks: a table with a row per model
(untrained, CPT, CPT without masking, SFT, RL), headed by how the run sampled and whether every row was scored on
the same turns, and a few plain sentences that check each stage's intended effect:

- CPT lowers the held-out loss on observation tokens against the untrained model;
- SFT raises format compliance (answers with a <predicted_observation> block) to at least 90%;
- RL raises the mean reward on its own prompts (first steps against last steps of its run);

and compare each stage with the one before it (CPT --no-mask with CPT) by the paired difference of their scores
over the same turns, with its 95% interval (`evaluation.paired_rows`): "no difference shown" where it holds zero.

A row's stage is its model's (`ChatModel.stage`); the RL reward trend is given by the caller (the RL run's
`reward_first`, `reward_last` and `trend_steps`, as `trajforge.training.rl.reward_trend` reads them).
"""

from collections.abc import Mapping, Sequence

from rich import box
from rich.table import Table

from trajforge.evaluation.paired_rows import RowComparison, row_label, shared_turns
from trajforge.evaluation.scores import DIMENSIONS

FORMAT_TARGET = 0.9


def _figure(value, scale: float = 1.0, digits: int = 1) -> str:
    return f"{scale * value:.{digits}f}" if value is not None else "-"


def stage_table(reports: Sequence, stages: Sequence[str | None], judge_label: str, sampling: str) -> Table:
    """A row per model; the title says how the run sampled (`sampling`), the caption whether the rows share turns."""
    labels = [row_label(r, s) for r, s in zip(reports, stages, strict=True)]
    table = Table(
        title=f"what each stage did, on held-out tasks (judge: {judge_label}; {sampling})",
        caption=f"{shared_turns(reports, labels)}. turns: turns scored / asked; loss: held-out loss on observation "
        "tokens; tags: format compliance % (answers with a <predicted_observation> block); form/fact/cons/real/qual: "
        "the judge's five dimensions, all: overall (0-100); verif: rule-verifier accuracy %",
        box=box.SIMPLE_HEAD,
        show_edge=False,
    )
    table.add_column("model", no_wrap=True)
    for column in ("turns", "loss", "tags", "form", "fact", "cons", "real", "qual", "all", "verif"):
        table.add_column(column, justify="right", no_wrap=True)
    for report, label in zip(reports, labels, strict=True):
        table.add_row(
            label,
            f"{report.scored}/{report.samples}",
            _figure(report.heldout_loss, digits=3),
            _figure(report.format_compliance, 100),
            *(_figure(report.pooled.get(d)) for d in DIMENSIONS),
            _figure(report.pooled.get("overall")),
            _figure(report.verifier_accuracy, 100),
        )
    return table


def _loss_lines(by_stage: Mapping) -> list[str]:
    untrained, cpt, nomask = by_stage.get("untrained"), by_stage.get("cpt"), by_stage.get("cpt --no-mask")
    lines = []
    if untrained and cpt and untrained.heldout_loss is not None and cpt.heldout_loss is not None:
        verdict = "lowered" if cpt.heldout_loss < untrained.heldout_loss else "did NOT lower"
        lines.append(
            f"CPT {verdict} the held-out loss on observation tokens: {untrained.heldout_loss:.3f} untrained -> "
            f"{cpt.heldout_loss:.3f}."
        )
    if cpt and nomask and cpt.heldout_loss is not None and nomask.heldout_loss is not None:
        lines.append(
            f"Masking ablation (same steps): held-out loss {cpt.heldout_loss:.3f} with the corpus masks, "
            f"{nomask.heldout_loss:.3f} with every observation in the loss."
        )
    return lines


def _format_line(by_stage: Mapping) -> list[str]:
    sft, cpt = by_stage.get("sft"), by_stage.get("cpt")
    if not sft or sft.format_compliance is None:
        return []
    before = cpt.format_compliance if cpt and cpt.format_compliance is not None else None
    met = "meets" if sft.format_compliance >= FORMAT_TARGET else "does NOT meet"
    start = f"{100 * before:.0f}% after CPT -> " if before is not None else ""
    return [
        f"SFT taught the answer format: format compliance {start}{100 * sft.format_compliance:.0f}% "
        f"({met} the {100 * FORMAT_TARGET:.0f}% target)."
    ]


def _trend_line(trend: Mapping[str, float] | None) -> list[str]:
    if not trend:
        return []
    verdict = "rose" if trend["reward_last"] > trend["reward_first"] else "did NOT rise"
    return [
        f"RL: the mean reward on its prompts {verdict}, {trend['reward_first']:.2f} over the first "
        f"{trend['trend_steps']} steps -> {trend['reward_last']:.2f} over the last {trend['trend_steps']}."
    ]


def reading(
    reports: Sequence,
    stages: Sequence[str | None],
    comparisons: Sequence[RowComparison],
    trend: Mapping[str, float] | None = None,
) -> list[str]:
    """One sentence per stage effect whose rows are present (the RL reward's `trend` when there is one), then each
    stage against the one before it, paired (`comparisons`: `paired_rows.row_comparisons` of these rows)."""
    by_stage = {stage: report for report, stage in zip(reports, stages, strict=True) if stage}
    lines = [*_loss_lines(by_stage), *_format_line(by_stage), *_trend_line(trend if "rl" in by_stage else None)]
    return [*lines, *(c.sentence() for c in comparisons if c.against in by_stage)]
