"""Per-domain judge rubrics: the system prompt an LLM judge reads, one file per domain laid out as
`{domain}/judge_system_prompt.txt` (the layout of AgentWorldBench's published judge prompts, so a user who has
them can point `--rubrics` at them). trajforge ships its own, written for the observations it collects; a user's
folder overrides them domain by domain. `_answer_format.txt` holds the answer format every shipped rubric ends with."""

from pathlib import Path

from trajforge.schemas.records import DOMAINS

BUNDLED = Path(__file__).parent / "rubrics"
FILE_NAME = "judge_system_prompt.txt"
ANSWER_FORMAT = "_answer_format.txt"


def _bundled(domain: str) -> str:
    path = BUNDLED / domain / FILE_NAME
    if not path.exists():
        path = BUNDLED / "other" / FILE_NAME
    return path.read_text() + "\n" + (BUNDLED / ANSWER_FORMAT).read_text()


def load_rubrics(folder: str | Path | None = None) -> dict[str, str]:
    """Domain -> judge system prompt: the bundled rubrics, overridden by any `{domain}/judge_system_prompt.txt` of
    `folder`. A folder that holds no such file is an error that names it."""
    rubrics = {domain: _bundled(domain) for domain in DOMAINS}
    if folder is None:
        return rubrics
    folder = Path(folder)
    found = sorted(folder.glob(f"*/{FILE_NAME}")) if folder.is_dir() else []
    if not found:
        raise FileNotFoundError(f"{folder}: no {{domain}}/{FILE_NAME} files (the layout --rubrics reads)")
    for path in found:
        rubrics[path.parent.name] = path.read_text()
    return rubrics
