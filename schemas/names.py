"""The names of what the stages write, in one place: the shard folders under a stage's output and the
bookkeeping files beside them. Every reader and writer takes them from here."""

# Shard folders, one per kind of shard, under the output of the stage that writes them.
CPT_DIR = "cpt"  # build-corpus
SFT_DIR = "sft"  # curate-sft
RL_DIR = "rl"  # prepare-rl

SHARD_SUFFIX = ".arrow"  # Arrow IPC stream files, named by content hash
SEGMENT_PREFIX = "segment-"  # raw JSON Lines segments, named by content hash

# Bookkeeping beside the data: a leading underscore keeps these out of every reader's inputs.
MANIFEST_NAME = "_manifest.json"  # written last: a stage's output is complete once it exists
REJECTIONS_NAME = "_rejections.jsonl"  # records that failed validation, every reason and the raw bytes
FILTERED_NAME = "_filtered.jsonl"  # trajectories a filter dropped, with the filter's name as the reason
DUPLICATES_NAME = "_duplicates.jsonl"  # every dropped -> kept duplicate pair
SEEN_NAME = "_seen_ids.txt"  # content ids kept by exact dedup so far: what an incremental build dedups against
SCORES_NAME = "_scores.jsonl"  # curate-sft's judge scores
WORK_DIR = "_work"  # the workers' small outputs, removed once the launcher has written the manifest
