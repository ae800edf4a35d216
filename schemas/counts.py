"""The names of a manifest's counts, in one place: the stages count under them, and the manifest's reconciliation,
the report and the commands' summaries read them back through here.

A name is a plain count (`written`) or a group and a kind (`filtered.min_turns`: group `filtered`, kind
`min_turns`); `key` builds one and `kinds` reads a group back, so nothing parses names written elsewhere."""

from collections.abc import Mapping

# Every stage: read = written + rejected + deduplicated + filtered, each group summed over its kinds.
READ = "read"
WRITTEN = "written"
REJECTED = "rejected"  # records that failed validation (build-corpus)
DEDUPLICATED = "deduplicated"  # .exact, .near (build-corpus)
FILTERED = "filtered"  # .<why>: a filter's name, knowledge_share, below_threshold, split_<split>, no_turns...
RECONCILED = (WRITTEN, REJECTED, DEDUPLICATED, FILTERED)

# build-corpus
TURNS_REMOVED = "turns_removed"  # .<filter>: turns a filter cut from a trajectory it kept
REDACTED = "redacted"  # .<kind of secret>
SPLIT = "split"  # .<split>: rows written to each split
TASKS = "tasks"  # .<split>: distinct tasks of each split
CATEGORY = "category"  # .<masking category>: turns
CHARS = "chars"  # .knowledge, .trajectories: action and observation characters written
KNOWLEDGE, TRAJECTORIES = "knowledge", "trajectories"  # the kinds of CHARS; KNOWLEDGE is a group too:
KNOWLEDGE_DOCUMENTS = f"{KNOWLEDGE}.documents"  # knowledge documents written
KNOWLEDGE_SHARE = "knowledge_share"  # the kind of FILTERED the knowledge share's cap drops
TURNS_WRITTEN = "turns_written"
TURNS_IN_LOSS = "turns_in_loss"

# curate-sft
ROWS_SKIPPED = "rows_skipped"  # .<split>: corpus rows SFT may not read
JUDGE_FAILURES = "judge_failures"
BELOW_THRESHOLD = "below_threshold"  # the kind of FILTERED best-of-N drops
KEPT = "kept"  # .rollout, .rationalization: where the kept samples came from; .verbatim_reference
VERBATIM_REFERENCE = "verbatim_reference"

# prepare-rl
WITH_VERIFIER = "with_verifier"


def key(group: str, kind: str) -> str:
    return f"{group}.{kind}"


def groups(counts: Mapping[str, int]) -> dict[str, dict[str, int]]:
    """Every group with its kinds and their counts, in the counts' order: {"split": {"train": 40, ...}, ...}."""
    found: dict[str, dict[str, int]] = {}
    for name, n in counts.items():
        if "." in name:
            group, kind = name.split(".", 1)
            found.setdefault(group, {})[kind] = n
    return found


def kinds(counts: Mapping[str, int], group: str) -> dict[str, int]:
    """One group's kinds and their counts: kinds(c, SPLIT) -> {"train": 40, ...}."""
    return groups(counts).get(group, {})


def total(counts: Mapping[str, int], group: str) -> int:
    """A plain count, or a group summed over its kinds."""
    return counts.get(group, 0) + sum(kinds(counts, group).values())


def reconciles(counts: Mapping[str, int]) -> bool:
    return counts.get(READ, 0) == sum(total(counts, group) for group in RECONCILED)


def knowledge_share(counts: Mapping[str, int]) -> float:
    """The knowledge documents' share of the CPT characters written."""
    chars = kinds(counts, CHARS)
    return chars.get(KNOWLEDGE, 0) / max(1, chars.get(KNOWLEDGE, 0) + chars.get(TRAJECTORIES, 0))
