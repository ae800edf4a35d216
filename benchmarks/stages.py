"""A benchmark's stages, resumable: each `trajforge` command of a run runs once per output folder.

A benchmark stopped part way (killed, out of time, a machine handed back) and run again with the same flags and
output folder continues where it was: a stage whose artifact exists is reused, with the seconds it took and the
commit it ran at (OUTPUT/stages.json); a training stage that stopped resumes from its latest checkpoint (train's own
resume); any other unfinished stage runs again from its start. A folder holding a run with other flags is refused,
so one run's table never mixes two runs' stages.
"""

import datetime
import json
from collections.abc import Callable
from pathlib import Path

from learning_signal import measured_trajforge
from results_record import git_commit

IGNORED_FLAGS = ("results",)  # where the results file goes does not change what a stage computes


class FlagsChanged(SystemExit):
    pass


class Stages:
    def __init__(self, out: Path, flags: dict, run: Callable[..., float | tuple[float, float]] = measured_trajforge):
        self.path, self._run = Path(out) / "stages.json", run
        self.flags = {k: v for k, v in flags.items() if k not in IGNORED_FLAGS}
        saved = json.loads(self.path.read_text()) if self.path.exists() else {"flags": self.flags, "stages": {}}
        before = saved["flags"]
        changed = sorted(k for k in before.keys() | self.flags.keys() if before.get(k) != self.flags.get(k))
        if changed:
            said = ", ".join(f"--{k.replace('_', '-')} {before.get(k)} -> {self.flags.get(k)}" for k in changed)
            raise FlagsChanged(
                f"{out} holds a run with other flags ({said}): run again with its flags to continue it, "
                "or give another --output"
            )
        self.done: dict[str, dict] = saved["stages"]
        self.reused: list[str] = []

    def run(self, name: str, artifact: Path, *command: str) -> float:
        """Run `command` unless this folder's run finished stage `name` and its `artifact` is still there; the
        stage's seconds either way."""
        finished = self.done.get(name)
        if finished is not None and Path(artifact).exists():
            print(f"= {name}: reused ({artifact}, finished {finished['finished']} at {finished['commit'][:7]})")
            self.reused.append(name)
            return finished["seconds"]
        ran = self._run(*command)
        seconds, peak = ran if isinstance(ran, tuple) else (ran, None)
        now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
        self.done[name] = {"seconds": seconds, "peak_mib": peak, "commit": git_commit()[0], "finished": now,
                           "artifact": str(artifact)}  # fmt: skip
        self._save()
        return seconds

    def adopt(self, name: str, artifact: Path, finished: dict, source: str) -> None:
        """Record stage `name` as finished by another run (`finished`: that run's record of it, its seconds, peak
        memory, commit and time), its artifact now at `artifact`, taken from `source`."""
        self.done[name] = {**finished, "artifact": str(artifact), "adopted_from": source}
        self._save()

    def _save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps({"flags": self.flags, "stages": self.done}, indent=2, default=str) + "\n")

    @property
    def seconds(self) -> dict[str, float]:
        return {name: stage["seconds"] for name, stage in self.done.items()}

    def peak_memory(self) -> str:
        """Each stage's peak resident memory, for the run's last lines."""
        peaks = {name: stage.get("peak_mib") for name, stage in self.done.items()}
        return ", ".join(f"{name} {peak / 1024:.1f} GiB" for name, peak in peaks.items() if peak is not None)

    def summary(self, invocation_s: float) -> str:
        """A run's last lines: its wall time in this invocation and over every stage (each stage's), each stage's
        peak memory, and the stages reused from an earlier invocation."""
        seconds = self.seconds
        lines = [f"wall time: {invocation_s:.0f} s in this invocation, {sum(seconds.values()):.0f} s over every stage ("
                 + ", ".join(f"{k} {v:.0f}" for k, v in seconds.items()) + ")",
                 f"peak resident memory: {self.peak_memory() or 'not recorded'}"]  # fmt: skip
        adopted = [name for name in self.reused if "adopted_from" in self.done[name]]
        if reused := [name for name in self.reused if name not in adopted]:
            lines.append("reused from an earlier invocation of this run: " + ", ".join(reused))
        if adopted:
            taken = (f"{name} ({self.done[name]['adopted_from']})" for name in adopted)
            lines.append("adopted from another run: " + ", ".join(taken))
        return "\n".join(lines)

    def provenance(self) -> dict:
        """Every stage's commit and finishing time, and which this invocation reused (for the results file)."""
        return {name: {**stage, "reused": name in self.reused} for name, stage in self.done.items()}
