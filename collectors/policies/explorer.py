"""Explores an environment for volume without a model. In a shell: commands sampled from a grammar seeded by
the task. With tools (MCP, search): calls sampled from each tool's input schema (collectors/policies/tool_sampler.py).

The vocabulary starts with the task's files, its `vocabulary` and the words of its instruction, and grows
with the names that `ls` and `find` print, so later commands touch what earlier ones discovered. About one
command in four is deliberately invalid (a missing file, a bad flag, a typo), so the corpus also teaches
what errors look like. Sampling is seeded: the same seed gives the same episode.
"""

import random
import re

from trajforge.collectors.policies.base import POLICIES, Policy
from trajforge.collectors.policies.tool_sampler import ToolCallSampler
from trajforge.schemas.records import Action, Observation

VALID = [
    "ls -la",
    "ls {dir}",
    "pwd",
    "cat {file}",
    "head -n {n} {file}",
    "tail -n {n} {file}",
    "wc -l {file}",
    "wc -c {file}",
    "grep -n {word} {file}",
    "grep -rn {word} .",
    "sort {file}",
    "sort -u {file} | head -n {n}",
    "find . -maxdepth 2 -type f",
    "find . -name '*.{ext}'",
    "stat -c '%s %n' {file}",
    "file {file}",
    "mkdir -p {newdir}",
    "cd {dir}",
    "cd /work",
    "echo {word} > {newfile}",
    "echo {word} >> {newfile}",
    "cp {file} {newfile}",
    "du -sh .",
    "date -u +%F",
    "python3 -c 'print({n} * {n})'",
    "python3 -c 'import sys; print(sys.version_info[:2])'",
    "git status --short",
    "git log --oneline -n {n}",
    "env | sort | head -n {n}",
    "echo $HOME",
    "uniq -c {file}",
    "tr a-z A-Z < {file}",
    "rev {file}",
    "seq 1 {n}",
    "seq 1 {n} | paste -sd+ | bc",
    "basename {file}",
    "dirname {file}",
    "ls -S | head -n {n}",
]
INVALID = [
    "cat {missing}",
    "cd {missing}",
    "ls --no-such-flag",
    "grep",
    "python3 -c 'raise SystemExit({n})'",
    "{typo} {file}",
    "rm /etc/hostname",
    "touch /root/x",
    "head -n -x {file}",
    "git chekout main",
    "python3 -c 'import no_such_module'",
    "sort --bogus {file}",
]
TYPOS = ["sl", "cta", "gerp", "pyhton3", "mkdri", "ehco"]
FILE_LIKE = re.compile(r"^[\w][\w.-]{0,40}$")


@POLICIES.register(help="sample commands from a grammar")
class ExplorerPolicy(Policy):
    name = "explorer"

    @classmethod
    def arguments(cls, config) -> dict:
        return {"steps": config.explorer_steps}

    def __init__(self, steps: int = 8, invalid_rate: float = 0.25):
        self.steps = steps
        self.invalid_rate = invalid_rate

    def start(self, task, action_space, initial, seed) -> None:
        super().start(task, action_space, initial, seed)
        self.rng = random.Random(seed)
        names = {t.get("name") for t in action_space}
        kind = "browser" if {"click", "goto", "go_back"} <= names else "tool_call"
        shell = "shell" in names or not action_space
        self.tools = None if shell else ToolCallSampler(action_space, self.rng, self.invalid_rate, kind)
        self._taken = 0
        self.files = sorted(task.files)
        self.dirs = sorted({f.rsplit("/", 1)[0] for f in task.files if "/" in f})
        self.words = sorted({w.lower() for w in re.findall(r"[A-Za-z]{4,}", task.instruction)} | set(task.vocabulary))
        self._learn(initial.content)

    def _learn(self, text: str) -> None:
        if self.tools is not None:
            self.tools.learn(text)
            return
        for token in text.split():
            name = token.strip("./")
            if FILE_LIKE.match(name) and name not in self.files and "." in name and len(self.files) < 64:
                self.files.append(name)

    def act(self, last: Observation | None) -> Action | None:
        if last is not None:
            self._learn(last.content)
        if self._taken >= self.steps:
            return None
        self._taken += 1
        if self.tools is not None:
            return self.tools.sample()
        templates = INVALID if self.rng.random() < self.invalid_rate else VALID
        return Action(kind="shell", content=self._fill(self.rng.choice(templates)))

    def _fill(self, template: str) -> str:
        rng = self.rng
        values = {
            "file": rng.choice(self.files) if self.files else "README",
            "dir": rng.choice(self.dirs) if self.dirs else ".",
            "word": rng.choice(self.words) if self.words else "hello",
            "n": str(rng.randint(1, 12)),
            "ext": rng.choice(["py", "txt", "md", "json", "csv", "log"]),
            "newdir": f"tmp{rng.randint(0, 99)}",
            "newfile": f"out{rng.randint(0, 99)}.txt",
            "missing": f"missing{rng.randint(0, 99)}.txt",
            "typo": rng.choice(TYPOS),
        }
        return template.format(**values)
