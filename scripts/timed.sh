#!/usr/bin/env bash
# Run a command, then say on stderr how long it took: `make demo` times each of its stages this way, so a slow
# one shows (issue 57). The command's exit code is kept.
start=$(date +%s%N)
"$@"
code=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
printf '  [%s %s: %d.%d s]\n' "$(basename "$1")" "$2" $((ms / 1000)) $((ms % 1000 / 100)) >&2
exit $code
