"""Information statistics beyond the paper's Table 3: how much of an observation its context already says.

Compression gain (one turn, its local context)
    D(x) is the size in bytes of x compressed as raw deflate (zlib level 6, 16 KiB window, memLevel 4), D(x | c) the
    size of x compressed with c as zlib's preset dictionary, and D0 = D(b"") the fixed cost of an empty stream. Then

        compression_gain = clip(1 - (D(o | c) - D0) / (D(o) - D0), 0, 1)

    over the UTF-8 bytes of the observation o (its first MAX_OBSERVATION_BYTES = 8 KiB) and of the context c (its
    last max_context_bytes, 4 KiB by default, at most MAX_CONTEXT_BYTES = 8 KiB). 1: the observation is almost all
    back-references into its context (little new information); 0: the context does not help. An empty observation
    or context has gain 0.

Predictability (one observation, the whole corpus)
    Observations are grouped by an action key (`action_key`: "shell:ls", "shell:git status", "tool_call:get_page")
    and compared through fingerprints (`observation_fingerprint`: a hash of the normalised text, so outputs that
    differ only in numbers, hex ids, case or whitespace are equal). With n the number of the key's observations in the
    corpus and c the number of them with this observation's fingerprint,

        predictability = c / (n + PRIOR_OBSERVATIONS)

    the share of the key's observations that look like this one, shrunk towards 0 for rare keys: one sighting gives
    1/5, ten identical ones 10/14, a hundred 100/104. An unknown key gives 0.

    `PredictabilityCombiner` counts (n, c) with bounded memory and is mergeable in any order: a key keeps exact
    fingerprint counts while it has at most `exact_limit` distinct fingerprints, then a count-min sketch, whose
    counts can only overestimate (by about n * e / width). Both are sums over the observations, so the table does not
    depend on how the corpus was split or merged.
"""

import re
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from hashlib import blake2b

from trajforge.schemas.records import Action, Trajectory

COMPRESSION_LEVEL = 6
# A 16 KiB window holds the longest context plus the longest observation, so every match into the context is found.
WINDOW_BITS = 14
# Less state than zlib's default (256 KiB) to allocate and clear for every turn; sizes barely change.
MEMORY_LEVEL = 4
MAX_OBSERVATION_BYTES = 8 * 1024
MAX_CONTEXT_BYTES = 8 * 1024
DEFAULT_CONTEXT_BYTES = 4 * 1024
PRIOR_OBSERVATIONS = 4
MAX_FINGERPRINT_CHARS = 4 * 1024


def _deflated_size(data: bytes, context: bytes = b"") -> int:
    settings = (COMPRESSION_LEVEL, zlib.DEFLATED, -WINDOW_BITS, MEMORY_LEVEL, zlib.Z_DEFAULT_STRATEGY)
    compressor = zlib.compressobj(*settings, context) if context else zlib.compressobj(*settings)
    return len(compressor.compress(data)) + len(compressor.flush())


_EMPTY_STREAM_SIZE = _deflated_size(b"")


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def compression_gain(observation: str, context: str, max_context_bytes: int = DEFAULT_CONTEXT_BYTES) -> float:
    """How much of the observation its context predicts, in [0, 1] (formula in the module docstring)."""
    max_context_bytes = min(max_context_bytes, MAX_CONTEXT_BYTES)
    if not observation or not context or max_context_bytes <= 0:
        return 0.0
    # Slicing characters before encoding bounds the cost; a character is at least one byte.
    data = _utf8(observation[:MAX_OBSERVATION_BYTES])[:MAX_OBSERVATION_BYTES]
    dictionary = _utf8(context[-max_context_bytes:])[-max_context_bytes:]
    alone = _deflated_size(data) - _EMPTY_STREAM_SIZE
    given = _deflated_size(data, dictionary) - _EMPTY_STREAM_SIZE
    return min(1.0, max(0.0, 1.0 - given / max(1, alone)))


# Commands that only say how to run the command that follows them.
_WRAPPERS = frozenset({"sudo", "env", "time", "nohup", "exec", "command", "builtin"})
# Programs whose first argument chooses what they do: their key keeps it ("shell:git status").
_SUBCOMMAND_PROGRAMS = frozenset(
    {"git", "docker", "kubectl", "pip", "pip3", "npm", "yarn", "pnpm", "cargo", "go", "apt", "apt-get", "conda",
     "poetry", "uv", "systemctl", "brew", "make"}
)  # fmt: skip
_ASSIGNMENT = re.compile(r"^\w+=")
_NAME = re.compile(r"[\w.+-]{1,32}")
_MAX_KEY_SOURCE_CHARS = 256
_MAX_TOOL_NAME_CHARS = 64


def _word(token: str) -> str:
    match = _NAME.match(token.strip("'\"").rsplit("/", 1)[-1].lower())
    return match.group() if match else ""


def _command_key(text: str) -> str:
    tokens = text[:_MAX_KEY_SOURCE_CHARS].split()
    i = 0
    while i < len(tokens) and (_ASSIGNMENT.match(tokens[i]) or tokens[i] in _WRAPPERS):
        i += 1
    if i == len(tokens):
        return ""
    program = _word(tokens[i])
    if program in _SUBCOMMAND_PROGRAMS:
        argument = next((t for t in tokens[i + 1 :] if not t.startswith("-")), "")
        subcommand = _word(argument)
        if subcommand:
            return f"{program} {subcommand}"
    return program


def action_key(action: Action) -> str:
    """What an observation is predicted from across the corpus: the action's kind and what it runs.

    shell, keystrokes and message: the first word of the command with its path and arguments dropped, past
    `VAR=value` prefixes and wrappers such as sudo ("sudo /bin/ls -la" -> "shell:ls"), plus the subcommand for
    programs such as git ("git status --short" -> "shell:git status"). tool_call and browser: the tool's name
    ("tool_call:get_page"). The kind alone when there is nothing to add.
    """
    if action.kind in ("tool_call", "browser"):
        detail = (action.name or "")[:_MAX_TOOL_NAME_CHARS]
    else:
        detail = _command_key(action.content)
    return f"{action.kind}:{detail}" if detail else action.kind


_DIGITS_TO_ZERO = str.maketrans("123456789", "000000000")
_HEX_RUN = re.compile(r"\b[a-f]*0[0a-f]*", re.ASCII)  # after digits became 0: a word starting hex-like with a digit
_ZERO_RUN = re.compile(r"00+")


def observation_fingerprint(observation: str) -> int:
    """64-bit hash of the observation's first MAX_FINGERPRINT_CHARS characters, normalised so that near-identical
    outputs match: lowercased; ASCII digits -> 0; a word that starts with hex digits and a digit (a number, a hash,
    a uuid part: "12", "3f2a9c1d") -> "#"; runs of 0 -> one; runs of whitespace -> one space, none at either end."""
    text = _HEX_RUN.sub("#", observation[:MAX_FINGERPRINT_CHARS].lower().translate(_DIGITS_TO_ZERO))
    text = " ".join(_ZERO_RUN.sub("0", text).split())
    return int.from_bytes(blake2b(_utf8(text), digest_size=8).digest(), "big")


@dataclass
class KeyCounts:
    """The observations of one action key: their number and how often each fingerprint occurs."""

    n: int = 0
    exact: dict[int, int] | None = field(default_factory=dict)  # fingerprint -> count; None once sketched
    sketch: list[int] | None = None  # count-min sketch, depth rows of width cells, row-major


@dataclass(frozen=True)
class PredictabilityTable:
    """Corpus-wide counts per action key; plain data, picklable. Build it with PredictabilityCombiner."""

    keys: dict[str, KeyCounts]
    sketch_width: int
    sketch_depth: int

    def counts(self, key: str, fingerprint: int) -> tuple[int, int]:
        """(observations of the key, observations of the key with this fingerprint); (0, 0) for an unknown key."""
        entry = self.keys.get(key)
        if entry is None:
            return 0, 0
        if entry.sketch is None:
            return entry.n, entry.exact.get(fingerprint, 0)
        cells = _sketch_cells(fingerprint, self.sketch_width, self.sketch_depth)
        return entry.n, min(entry.n, min(entry.sketch[i] for i in cells))


def _sketch_cells(fingerprint: int, width: int, depth: int) -> list[int]:
    # One independent 16-bit slice of the 64-bit fingerprint per row.
    return [row * width + ((fingerprint >> (16 * row)) & 0xFFFF) % width for row in range(depth)]


Accumulator = dict[str, KeyCounts]


class PredictabilityCombiner:
    """Mergeable counts for `predictability`, shaped for a Beam CombineFn: create, add, merge, extract.

    add and merge update and return their first argument, as Beam allows; merge leaves the others untouched.
    Memory per key: at most exact_limit counts or one sketch of width * depth counters.
    """

    def __init__(self, exact_limit: int = 64, sketch_width: int = 256, sketch_depth: int = 4):
        if not 1 <= sketch_depth <= 4 or not 1 <= sketch_width <= 1 << 16 or exact_limit < 0:
            raise ValueError("need 1 <= sketch_depth <= 4, 1 <= sketch_width <= 65536 and exact_limit >= 0")
        self.exact_limit = exact_limit
        self.sketch_width = sketch_width
        self.sketch_depth = sketch_depth

    def create(self) -> Accumulator:
        return {}

    def add(self, acc: Accumulator, key: str, observation: str) -> Accumulator:
        entry = acc.get(key)
        if entry is None:
            entry = acc[key] = KeyCounts()
        entry.n += 1
        self._count(entry, observation_fingerprint(observation), 1)
        return acc

    def merge(self, accs: Iterable[Accumulator]) -> Accumulator:
        accs = iter(accs)
        merged = next(accs, None)
        if merged is None:
            return self.create()
        for acc in accs:
            for key, other in acc.items():
                entry = merged.get(key)
                if entry is None:
                    entry = merged[key] = KeyCounts()
                entry.n += other.n
                if other.sketch is not None:
                    self._to_sketch(entry)
                    entry.sketch = [a + b for a, b in zip(entry.sketch, other.sketch, strict=True)]
                else:
                    for fingerprint, count in other.exact.items():
                        self._count(entry, fingerprint, count)
        return merged

    def extract(self, acc: Accumulator) -> PredictabilityTable:
        keys = {
            key: KeyCounts(
                n=entry.n,
                exact=None if entry.exact is None else dict(sorted(entry.exact.items())),
                sketch=None if entry.sketch is None else list(entry.sketch),
            )
            for key, entry in sorted(acc.items())
        }
        return PredictabilityTable(keys=keys, sketch_width=self.sketch_width, sketch_depth=self.sketch_depth)

    def _count(self, entry: KeyCounts, fingerprint: int, count: int) -> None:
        if entry.sketch is None:
            entry.exact[fingerprint] = entry.exact.get(fingerprint, 0) + count
            if len(entry.exact) <= self.exact_limit:
                return
            self._to_sketch(entry)
            return
        for cell in _sketch_cells(fingerprint, self.sketch_width, self.sketch_depth):
            entry.sketch[cell] += count

    def _to_sketch(self, entry: KeyCounts) -> None:
        # The sketch of the exact counts is the sketch of the observations: switching never loses determinism.
        if entry.sketch is not None:
            return
        exact, entry.exact = entry.exact, None
        entry.sketch = [0] * (self.sketch_width * self.sketch_depth)
        for fingerprint, count in exact.items():
            self._count(entry, fingerprint, count)


def predictability(table: PredictabilityTable, key: str, observation: str, prior: float = PRIOR_OBSERVATIONS) -> float:
    """c / (n + prior): how typical this observation is of its action key across the corpus (module docstring)."""
    n, count = table.counts(key, observation_fingerprint(observation))
    return count / (n + prior) if n else 0.0


def build_predictability_table(
    trajectories: Iterable[Trajectory], combiner: PredictabilityCombiner | None = None
) -> PredictabilityTable:
    """The table of a corpus in one process (a Beam job wraps the combiner instead)."""
    combiner = combiner or PredictabilityCombiner()
    acc = combiner.create()
    for trajectory in trajectories:
        for turn in trajectory.turns:
            combiner.add(acc, action_key(turn.action), turn.observation.content)
    return combiner.extract(acc)
