"""`terminal-files`: file-system work in the Docker terminal (move, copy, make folders, delete by extension,
concatenate, create, count, archive, edit in place, append, make executable), a family apart from terminal-text's
text processing, so an agent trained on one can be measured on the other (`--held-out-family terminal-files`).
Every solution is one command, optionally preceded by a look at the starting files and followed by a look at the
result; every path, word and number it uses is in the instruction. The check reads the end state: what should be
there is there with its content, and what should be gone is gone."""

import posixpath
import random
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from pydantic import Field, model_validator

from trajforge.collectors.families import FAMILIES
from trajforge.collectors.families.base import Draft, Family, FamilyParams
from trajforge.collectors.families.contents import file_text, sentences_with, solution_shape, word_lines
from trajforge.collectors.families.words import DIRS, EXTENSIONS, OUT_NAMES, STEMS, WORDS
from trajforge.sandboxes.base import ShellCheck
from trajforge.schemas.records import Action

Operation = Literal[
    "move", "copy", "make-tree", "delete-ext", "concat", "create", "count-files", "archive", "replace", "append",
    "chmod",
]  # fmt: skip
SCRIPT_DIRS = ("bin", "scripts", "tools")


class TerminalFilesParams(FamilyParams):
    operations: tuple[Operation, ...] = Operation.__args__
    max_files: int = Field(default=6, ge=2, le=20)  # files in a folder a task deletes from, counts or archives

    @model_validator(mode="after")
    def _operations(self):
        if not self.operations:
            raise ValueError("operations must not be empty")
        return self


@dataclass(frozen=True)
class Change:
    """One operation, drawn: the instruction, the starting files, the command that does it, the check of the end
    state, and a look before and after."""

    instruction: str
    files: dict[str, str]
    command: str
    check: tuple[str, ...]  # shell tests, all of which the end state passes
    look: str  # a command that shows the starting state
    show: str  # a command that shows the result
    setup: tuple[str, ...] = ()
    made: tuple[str, ...] = ()  # the paths the command makes (the explorer's vocabulary, with the files)


@FAMILIES.register(help="file-system work in the terminal: move, copy, folders, delete, archive, edit, permissions")
class TerminalFilesFamily(Family):
    name = "terminal-files"
    kind = "terminal"
    Params = TerminalFilesParams

    def draft(self, rng: random.Random) -> Draft:
        job = OPERATIONS[rng.choice(self.params.operations)](rng, self.params.max_files)
        commands = solution_shape(rng, job.look, job.command, job.show)
        return Draft(
            instruction=job.instruction,
            files=job.files,
            setup=job.setup,
            actions=tuple(Action(kind="shell", content=c) for c in commands),
            check=ShellCheck(command=" && ".join(job.check)),
            vocabulary=tuple(job.files) + job.made,
        )


def _has(path: str, content: str) -> str:
    """The test that `path` holds `content` (trailing newlines aside, as `$(cat ...)` reads it)."""
    expected = shlex.quote(content.rstrip("\n"))
    return f'test "$(cat {path})" = {expected}'


def _gone(path: str) -> str:
    return f"test ! -e {path}"


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _path(rng: random.Random, folders: tuple[str, ...] = DIRS, extension: str | None = None) -> str:
    """A file's path: in the workspace itself or in one of `folders`, a stem, and an extension."""
    folder = rng.choice(("",) * 3 + folders)
    return f"{folder}/{rng.choice(STEMS)}.{extension or rng.choice(('txt', *EXTENSIONS))}".lstrip("/")


def _contents(rng: random.Random) -> str:
    return file_text(word_lines(rng, rng.randint(1, 5), (1, 3)))


def _folder(rng: random.Random) -> str:
    """A folder the workspace has no file in yet: one of DIRS, or one below it."""
    return rng.choice((rng.choice(DIRS), f"{rng.choice(DIRS)}/{rng.choice(WORDS)}"))


def _look_at(path: str) -> str:
    return f"ls {posixpath.dirname(path)}".rstrip()


def _move(rng, max_files):
    source, content, target = _path(rng), _contents(rng), _path(rng)
    while target == source:
        target = _path(rng)
    folder, same_folder = posixpath.dirname(target), posixpath.dirname(target) == posixpath.dirname(source)
    return Change(
        f"{'Rename' if same_folder else 'Move'} {source} to {target}.", {source: content}, f"mv {source} {target}",
        (_has(target, content), _gone(source)), _look_at(source), f"cat {target}",
        setup=() if same_folder or not folder else (f"mkdir -p {folder}",), made=(target,),
    )  # fmt: skip


def _copy(rng, max_files):
    source, content, folder = _path(rng), _contents(rng), _folder(rng)
    while folder == posixpath.dirname(source):
        folder = _folder(rng)
    copied = f"{folder}/{posixpath.basename(source)}"
    return Change(
        f"Copy {source} into a new folder {folder}, keeping the original.", {source: content},
        f"mkdir -p {folder} && cp {source} {folder}/", (_has(copied, content), _has(source, content)),
        f"cat {source}", f"ls {folder}", made=(copied,),
    )  # fmt: skip


def _make_tree(rng, max_files):
    root = rng.choice(WORDS)
    branches = rng.sample(DIRS, rng.randint(2, 4))
    folders = [f"{root}/{branch}" + rng.choice(("", f"/{rng.choice(WORDS)}")) for branch in branches]
    return Change(
        f"Create the folders {_listed(folders)}.", {}, f"mkdir -p {' '.join(folders)}",
        tuple(f"test -d {f}" for f in folders), "ls", f"ls -R {root}", made=tuple(folders),
    )  # fmt: skip


def _some_files(rng: random.Random, folder: str, count: int, extensions: tuple[str, ...]) -> dict[str, str]:
    """`count` files in `folder` with word stems and these extensions, each of them used while the files last."""
    kinds = list(extensions[:count]) + rng.choices(extensions, k=max(0, count - len(extensions)))
    rng.shuffle(kinds)
    stems = rng.sample(WORDS, count)
    return {f"{folder}/{stem}.{kind}": _contents(rng) for stem, kind in zip(stems, kinds, strict=True)}


def _delete_ext(rng, max_files):
    folder = _folder(rng)
    extension, *others = rng.sample(EXTENSIONS, rng.randint(2, 3))
    files = _some_files(rng, folder, rng.randint(2, max_files), (extension, *others))
    gone = [p for p in files if p.endswith(f".{extension}")]
    kept = [_has(p, c) for p, c in files.items() if p not in gone]
    return Change(
        f"Delete the .{extension} files in {folder} and keep the others.", files, f"rm {folder}/*.{extension}",
        tuple(_gone(p) for p in gone) + tuple(kept), f"ls {folder}", f"ls {folder}",
    )  # fmt: skip


def _concat(rng, max_files):
    sources = []
    while len(sources) < 2 or (len(sources) < 3 and rng.random() < 0.5):
        sources += [path for path in [_path(rng)] if path not in sources]
    files = {s: _contents(rng) for s in sources}
    target = rng.choice(OUT_NAMES)
    return Change(
        f"Concatenate {_listed(sources)}, in that order, into {target}.", files,
        f"cat {' '.join(sources)} > {target}", (_has(target, "".join(files.values())),),
        f"wc -l {' '.join(sources)}", f"cat {target}", made=(target,),
    )  # fmt: skip


def _create(rng, max_files):
    path = _path(rng, extension="txt")
    lines = word_lines(rng, rng.randint(1, 4), (1, 3))
    folder = posixpath.dirname(path)
    write = f"printf '%s\\n' {' '.join(shlex.quote(line) for line in lines)} > {path}"
    quoted = _listed([f'"{line}"' for line in lines])
    told = f"the line {quoted}" if len(lines) == 1 else f"the lines {quoted}, in that order"
    return Change(
        f"Create {path} holding {told}.", {}, f"mkdir -p {folder} && {write}" if folder else write,
        (_has(path, file_text(lines)),), "ls", f"cat {path}", made=(path,),
    )  # fmt: skip


def _count_files(rng, max_files):
    folder, out = _folder(rng), rng.choice(OUT_NAMES)
    extension, other = rng.sample(EXTENSIONS, 2)
    files = _some_files(rng, folder, rng.randint(2, max_files), (extension, other))
    which = rng.choice((f".{extension} ", ""))  # the files of one extension, or all of them
    listed = f"{folder}/*{which.rstrip()}" if which else folder
    count = sum(p.endswith(which.rstrip()) for p in files)
    return Change(
        f"Count the {which}files in {folder} and write the number to {out}.", files, f"ls {listed} | wc -l > {out}",
        (_has(out, str(count)),), f"ls {folder}", f"cat {out}", made=(out,),
    )  # fmt: skip


def _archive(rng, max_files):
    folder = _folder(rng)
    files = _some_files(rng, folder, rng.randint(1, max_files), rng.sample(EXTENSIONS, 2))
    if rng.random() < 0.5:  # a folder below it too, whose file the archive holds
        files |= _some_files(rng, f"{folder}/{rng.choice(STEMS)}", 1, ("txt",))
    name = f"{rng.choice(STEMS)}.{rng.choice(('tar', 'tar.gz'))}"
    create = "czf" if name.endswith(".gz") else "cf"
    members = "\n".join(sorted(files))
    listing = f"tar tf {name} | sed 's|^[.]/||' | grep -v '/$' | LC_ALL=C sort"  # the files it holds, by path
    return Change(
        f"Make a tar archive {name} of the folder {folder}.", files, f"tar {create} {name} {folder}",
        (f'test "$({listing})" = {shlex.quote(members)}',), f"ls -R {folder}", f"tar tf {name}", made=(name,),
    )  # fmt: skip


def _replace(rng, max_files):
    path = _path(rng, extension="txt")
    lines, word = sentences_with(rng, rng.randint(2, 8))
    new = rng.choice([w for w in WORDS if w != word])
    edited = [line.replace(word, new) for line in lines]
    return Change(
        f"Replace every {word} with {new} in {path}, editing the file in place.", {path: file_text(lines)},
        f"sed -i 's/{word}/{new}/g' {path}", (_has(path, file_text(edited)),), f"cat {path}", f"cat {path}",
    )  # fmt: skip


def _append(rng, max_files):
    path, content = _path(rng), _contents(rng)
    line = " ".join(rng.choices(WORDS, k=rng.randint(1, 3)))
    return Change(
        f'Append the line "{line}" to {path}.', {path: content}, f"echo {shlex.quote(line)} >> {path}",
        (_has(path, content + line),), f"cat {path}", f"cat {path}",
    )  # fmt: skip


def _chmod(rng, max_files):
    path = _path(rng, SCRIPT_DIRS, extension="sh")
    content = f"#!/bin/sh\necho {rng.choice(WORDS)}\n"
    return Change(
        f"Make {path} executable.", {path: content}, f"chmod +x {path}", (f"test -x {path}", _has(path, content)),
        f"ls -l {posixpath.dirname(path)}".rstrip(), f"ls -l {path}",
    )  # fmt: skip


OPERATIONS: dict[str, Callable[[random.Random, int], Change]] = {
    "move": _move,
    "copy": _copy,
    "make-tree": _make_tree,
    "delete-ext": _delete_ext,
    "concat": _concat,
    "create": _create,
    "count-files": _count_files,
    "archive": _archive,
    "replace": _replace,
    "append": _append,
    "chmod": _chmod,
}
