"""What each training stage did, read off one evaluation over held-out tasks: a table with a row per model
(untrained, CPT, CPT without masking, SFT, RL) and a few plain sentences that check each stage's intended effect:

- CPT lowers the held-out loss on observation tokens against the untrained model;
- SFT raises format compliance (answers with a <predicted_observation> block) to at least 90%;
- RL raises the mean reward on its own prompts (first steps against last steps of its run) and keeps the held-out
  overall within noise of SFT or above it (noise: twice the standard error of the difference of the two means).

A row's stage is its model's (`ChatModel.stage`); the RL reward trend is given by the caller (the RL run's
`reward_first`, `reward_last` and `trend_steps`, as `trajforge.training.rl.reward_trend` reads them).
"""

import math
from collections.abc import Mapping, Sequence

from rich import box
from rich.table import Table

from trajforge.evaluation.scores import DIMENSIONS

FORMAT_TARGET = 0.9


def _figure(value, scale: float = 1.0, digits: int = 1) -> str:
    return f"{scale * value:.{digits}f}" if value is not None else "-"


def stage_table(reports: Sequence, stages: Sequence[str | None], judge_label: str) -> Table:
    table = Table(
        title=f"what each stage did, on held-out tasks (judge: {judge_label})",
        caption="loss: held-out loss on observation tokens; tags: format compliance % (answers with a "
        "<predicted_observation> block); form/fact/cons/real/qual: the judge's five dimensions, all: overall "
        "(0-100); verif: rule-verifier accuracy %",
        box=box.SIMPLE_HEAD,
        show_edge=False,
    )
    table.add_column("model", no_wrap=True)
    for column in ("loss", "tags", "form", "fact", "cons", "real", "qual", "all", "verif"):
        table.add_column(column, justify="right", no_wrap=True)
    for report, stage in zip(reports, stages, strict=True):
        table.add_row(
            stage or report.model,
            _figure(report.heldout_loss, digits=3),
            _figure(report.format_compliance, 100),
            *(_figure(report.pooled.get(d)) for d in DIMENSIONS),
            _figure(report.pooled.get("overall")),
            _figure(report.verifier_accuracy, 100),
        )
    return table


def _mean_and_error(values: Sequence[float]) -> tuple[float, float]:
    n = len(values)
    mean = sum(values) / n
    variance = sum((v - mean) ** 2 for v in values) / (n - 1) if n > 1 else 0.0
    return mean, math.sqrt(variance / n)


def reading(reports: Sequence, stages: Sequence[str | None], trend: Mapping[str, float] | None = None) -> list[str]:
    """One sentence per stage whose rows are present, saying whether its effect shows (the RL reward's `trend`
    when there is one)."""
    by_stage = {stage: report for report, stage in zip(reports, stages, strict=True) if stage}
    lines = []
    untrained, cpt, nomask = by_stage.get("untrained"), by_stage.get("cpt"), by_stage.get("cpt --no-mask")
    sft, rl = by_stage.get("sft"), by_stage.get("rl")
    if untrained and cpt and untrained.heldout_loss is not None and cpt.heldout_loss is not None:
        verdict = "lowered" if cpt.heldout_loss < untrained.heldout_loss else "did NOT lower"
        lines.append(
            f"CPT {verdict} the held-out loss on observation tokens: {untrained.heldout_loss:.3f} untrained -> "
            f"{cpt.heldout_loss:.3f}."
        )
    if cpt and nomask and cpt.heldout_loss is not None and nomask.heldout_loss is not None:
        lines.append(
            f"Masking ablation (same steps): held-out loss {cpt.heldout_loss:.3f} with the corpus masks, "
            f"{nomask.heldout_loss:.3f} with every observation in the loss; overall "
            f"{_figure(cpt.pooled.get('overall'))} vs {_figure(nomask.pooled.get('overall'))}."
        )
    if sft and sft.format_compliance is not None:
        before = cpt.format_compliance if cpt and cpt.format_compliance is not None else None
        met = "meets" if sft.format_compliance >= FORMAT_TARGET else "does NOT meet"
        start = f"{100 * before:.0f}% after CPT -> " if before is not None else ""
        lines.append(
            f"SFT taught the answer format: format compliance {start}{100 * sft.format_compliance:.0f}% "
            f"({met} the {100 * FORMAT_TARGET:.0f}% target)."
        )
    if rl:
        if trend:
            verdict = "rose" if trend["reward_last"] > trend["reward_first"] else "did NOT rise"
            lines.append(
                f"RL: the mean reward on its prompts {verdict}, {trend['reward_first']:.2f} over the first "
                f"{trend['trend_steps']} steps -> {trend['reward_last']:.2f} over the last {trend['trend_steps']}."
            )
        if sft and rl.line_overall and sft.line_overall:
            (rl_mean, rl_error), (sft_mean, sft_error) = map(_mean_and_error, (rl.line_overall, sft.line_overall))
            noise = 2 * math.sqrt(rl_error**2 + sft_error**2)
            if rl_mean >= sft_mean:
                verdict = "at or above SFT"
            elif sft_mean - rl_mean <= noise:
                verdict = "below SFT but within noise"
            else:
                verdict = "BELOW SFT beyond noise"
            lines.append(f"RL held-out overall {rl_mean:.1f} vs SFT {sft_mean:.1f} (noise +/- {noise:.1f}): {verdict}.")
    return lines
