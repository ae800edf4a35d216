"""The masking module's one entry point: statistics, category and loss mask for every turn of a trajectory."""

from collections import deque
from dataclasses import dataclass

from trajforge.masking.information import PredictabilityTable, action_key, compression_gain, predictability
from trajforge.masking.masks import TurnMask, kept_spans, sampled_in_loss
from trajforge.masking.policy import MaskingPolicy
from trajforge.masking.statistics import TurnStatistics, turn_statistics
from trajforge.schemas.records import Trajectory, Turn


@dataclass(frozen=True, slots=True)
class TurnAnnotation:
    turn_index: int
    statistics: TurnStatistics
    mask: TurnMask


def mask_trajectory(
    trajectory: Trajectory, policy: MaskingPolicy, predictability_table: PredictabilityTable | None = None
) -> list[TurnAnnotation]:
    """One annotation per turn, in order. Depends only on its arguments: reruns give identical masks.

    compression_gain, when the policy uses it, compresses each observation against the policy's
    context.previous_observations earlier observations and the turn's action, joined by newlines. A turn whose source
    gave a loss_weight keeps its category, but the weight, clipped to [0, 1], replaces the category's keep ratio: 0 is
    never in the loss, 1 always is, in either keep mode. Turns the environment failed (infra errors) are dropped
    before masking, not here.
    """
    if policy.needs_predictability and predictability_table is None:
        raise ValueError(f"policy {policy.name!r} uses predictability: pass a predictability table")
    context = policy.config.context
    previous: deque[str] = deque(maxlen=context.previous_observations)
    annotations = []
    for turn in trajectory.turns:
        action, observation = turn.action.content, turn.observation.content
        gain = likely = None
        if policy.needs_compression_gain:
            history = "\n".join([*(text[-context.max_bytes :] for text in previous), action])
            gain = compression_gain(observation, history, context.max_bytes)
            previous.append(observation)
        if policy.needs_predictability:
            likely = predictability(predictability_table, action_key(turn.action), observation)
        statistics = turn_statistics(action, observation, compression_gain=gain, predictability=likely)
        category, keep = policy.classify(statistics)
        annotations.append(TurnAnnotation(turn.index, statistics, _mask(trajectory, turn, policy, category, keep)))
    return annotations


def _mask(trajectory: Trajectory, turn: Turn, policy: MaskingPolicy, category: str, keep: float) -> TurnMask:
    decided_by = "policy"
    if turn.loss_weight is not None:
        keep, decided_by = min(1.0, max(0.0, turn.loss_weight)), "loss_weight"
    observation = turn.observation.content
    config = policy.config
    if config.keep_mode == "turn_sampling":
        in_loss = sampled_in_loss(keep, config.seed, trajectory.trajectory_id, turn.index)
        spans = ((0, len(observation)),) if in_loss else ()
    else:
        spans = kept_spans(observation, keep, config.span.layout, config.span.chunk_chars)
        in_loss = bool(spans)
    return TurnMask(category=category, keep_ratio=keep, in_loss=in_loss, spans=spans, decided_by=decided_by)
