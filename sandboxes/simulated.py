"""A world model as an environment (the paper's Sim RL): a world model answers each action with a predicted
observation, steered by a natural-language simulation instruction (inject errors, paginate, fail partially).
Episodes run through the same collectors and come out as normal raw trajectories, marked as simulated.

The world model is anything that answers chat messages (`WorldModel`): an OpenAI-compatible endpoint
(`EndpointWorldModel`: `trajforge serve CHECKPOINT`, vLLM, ...) or a checkpoint loaded in this process
(agents/world_model.py, which batches the answers of concurrent episodes). It is asked as a corpus turn is
(evaluation/turns.py's `corpus_turn`, the layout training, eval and AgentWorldBench share): the system prompt of
the episode's parts (task, action space, the task's real starting state, simulation instruction), then per earlier
turn the action as the user's message and the observation as the assistant's, then the new action. The agent sees
only the prediction the one extractor reads out of the answer (evaluation/extraction.py).

The task's own check runs in the world model too (`check`), decided from what the agent did, as the real environment
would: when none of the agent's actions could change the state (sandboxes/state_changes.py: it only looked, printed,
or answered at once), the check is decided on the real starting state (a file comparison by the grounded starting
file, without asking the world model; any other check asked right after the starting state). A shell check that
compares one file with a value (`test "$(cat F)" = V`) is decided by the file's content the world model predicts for
`cat F` after the episode, which trajforge compares with V as the check does: nothing the world model is asked shows
it V. Any other shell check is one more simulated command whose predicted exit code decides, a tool check one more
simulated tool call whose predicted result is tested, a page check is tested on the predicted page; a task with no
check may be judged by an endpoint judge of completion (sandboxes/completion_judge.py). `check_details` says how it
was decided."""

import json
import re
from typing import Literal

from trajforge.endpoints import ChatClient, Endpoint, EndpointError
from trajforge.evaluation.extraction import Prediction, extract_prediction
from trajforge.evaluation.turns import corpus_turn
from trajforge.sandboxes.base import InfraError, PageCheck, Sandbox, ShellCheck, Task, ToolCheck, tool_check_action
from trajforge.sandboxes.completion_judge import CompletionJudge
from trajforge.sandboxes.starting_state import StartingState
from trajforge.sandboxes.state_changes import could_change_state
from trajforge.schemas.check_turn import compared_file, exit_code_command, file_command
from trajforge.schemas.records import Action, Observation
from trajforge.schemas.turn_text import action_text

Prompt = Literal["plain", "template"]
ATTEMPTS = 3  # answers asked for one observation before the world model is declared unable to give one
EXIT_LINE = re.compile(r"exit code: (\d+)\s*\Z")
SIMULATED = json.dumps({"simulated": True})
AT_START = " asked on the starting state (no action of the agent could change it)"


class WorldModel:
    """Answers a world-model conversation (chat messages); `join`/`leave` bracket an episode (a batching world
    model counts the episodes that will ask)."""

    name = "world-model"
    prompt: Prompt = "template"  # how it was trained to be asked: a world-model template, or the plain system prompt

    def answer(self, messages: list[dict], seed: int) -> str:
        raise NotImplementedError

    def join(self) -> None:
        pass

    def leave(self) -> None:
        pass


class EndpointWorldModel(WorldModel):
    """A world model served at an OpenAI-compatible endpoint (its client retries timeouts and 5xx answers)."""

    def __init__(
        self, endpoint: Endpoint, max_tokens: int = 512, temperature: float = 0.0, prompt: Prompt = "template"
    ):
        self.client, self.name, self.prompt = ChatClient(endpoint), endpoint.model, prompt
        self.max_tokens, self.temperature = max_tokens, temperature

    def answer(self, messages: list[dict], seed: int) -> str:
        try:
            return self.client.texts(messages, self.max_tokens, self.temperature, seed=seed)[0]
        except EndpointError as exc:
            raise InfraError(f"the world model gave no observation: {exc}") from exc


class SimulatedEnvironment(Sandbox):
    source_kind = "simulated"

    def __init__(
        self,
        world_model: WorldModel,
        instruction: str = "",
        action_space: list[dict] | None = None,
        judge: CompletionJudge | None = None,
    ):
        self.world_model, self.judge = world_model, judge
        self.name = f"simulated:{world_model.name}"
        self.instruction = instruction
        self.offered = action_space or []  # the action space of the kind it stands for, unless a recording says
        self.tools = self.offered
        self.messages: list[dict] = []  # the conversation the world model was last asked
        self._row: dict = {}
        self._state: StartingState | None = None
        self._joined = False
        self._details: dict = {}

    def reset(self, task: Task) -> Observation:
        self.close()
        self._state = _starting_state(task)
        self.tools = self._state.action_space if self._state is not None and self._state.action_space else self.offered
        initial = self._state.render() if self._state is not None else task.config.get("initial_state", "")
        self._row = {
            "trajectory_id": f"simulated:{task.id}",
            "domain": task.domain,
            "task_description": task.instruction,
            "action_space": json.dumps(self.tools, ensure_ascii=False),
            "initial_state": initial,
            "demonstrations": "",
            "turns": [],
        }
        self.instruct(task.config.get("simulation_instruction", ""))
        self.world_model.join()
        self._joined = True
        return Observation(content=initial, metadata=SIMULATED)

    def step(self, action: Action) -> Observation:
        predicted = self._predict(action)
        self._row["turns"].append(_turn(action, predicted))
        fmt = "json" if _is_json(predicted) else "aria" if predicted.startswith("URL: ") else "text"
        return Observation(content=predicted, format=fmt, metadata=SIMULATED)

    def _predict(self, action: Action, row: dict | None = None) -> str:
        """The observation the world model predicts for `action` after the turns so far (of this episode, or of
        `row`); an answer with no observation in it is asked again (another seed), and after ATTEMPTS the episode
        ends as infra_error."""
        row = self._row if row is None else row
        turns = row["turns"]
        row = {**row, "turns": [*turns, _turn(action, "")]}
        turn = corpus_turn(row, len(turns), plain=self.world_model.prompt == "plain")
        self.messages = [{"role": role, "content": content} for role, content in turn.messages]
        for attempt in range(ATTEMPTS):
            prediction = extract_prediction(
                self.world_model.answer(self.messages, seed=len(turns) * ATTEMPTS + attempt)
            )
            if self._parseable(prediction):
                return prediction.text
        raise InfraError(f"the world model gave no parseable observation in {ATTEMPTS} answers to {action.content!r}")

    def _parseable(self, prediction: Prediction) -> bool:
        """Whether an answer holds an observation: a plain-prompted world model answers with the observation itself
        (empty output included); a template-prompted one tags it, so an untagged answer left empty once its
        reasoning is dropped holds none."""
        return self.world_model.prompt == "plain" or prediction.tagged or not prediction.empty

    # -- the task's check, simulated -----------------------------------------------------------------------
    def check(self, task: Task) -> bool | None:
        """The task's check on the episode's end state. No action of the agent could change the state (it only
        looked, printed, or answered at once): the check is decided on the real starting state, by the grounded
        starting file for a file comparison, else asked right after the starting state (the episode's turns left out).
        Nothing asked shows the world model a file comparison's expected value."""
        check = task.check
        unchanged = not any(could_change_state(t["action"]) for t in self._row["turns"])
        row = {**self._row, "turns": []} if unchanged else self._row
        if isinstance(check, ShellCheck):
            return self._shell_check(check.command, row, unchanged)
        if isinstance(check, ToolCheck):
            predicted = self._predict(tool_check_action(check), row)
            is_error, text = tool_result(predicted)
            how = "a simulated tool call: its predicted result" + (AT_START if unchanged else "")
            self._details = _decided(how, predicted, is_error=is_error)
            return not is_error and check.contains in text
        if isinstance(check, PageCheck):
            turns = self._row["turns"]
            page = turns[-1]["observation"]["content"] if turns else self._row["initial_state"]
            url = page.split("\n", 1)[0].removeprefix("URL: ") if page.startswith("URL: ") else ""
            self._details = _decided("the predicted page", page, url=url)
            return check.url_contains in url and check.contains in page
        if check is None and self.judge is not None:
            turns = [(action_text(t["action"]), t["observation"]["content"]) for t in self._row["turns"]]
            passed, self._details = self.judge.judge(task, turns)
            return passed
        return None

    def _shell_check(self, command: str, row: dict, unchanged: bool) -> bool:
        compared = compared_file(command)
        start = self._state.file_text(compared[0]) if compared and unchanged and self._state else None
        if start is not None:
            path, expected = compared
            self._details = {
                "decided_by": f"the task's check on the real starting state: no action of the agent could change it "
                f"(the starting {path}, compared as the check compares it; the world model was not asked)",
                "starting_content": start[-2000:],
                "expected": expected,
            }
            return start.rstrip("\n") == expected
        if compared is not None:
            return self._file_equals(*compared, row, unchanged)
        predicted = self._predict(Action(kind="shell", content=exit_code_command(command)), row)
        match = EXIT_LINE.search(predicted)
        code = int(match.group(1)) if match else None
        how = "a simulated shell check: its predicted exit code" + (AT_START if unchanged else "")
        self._details = _decided(how, predicted, exit_code=code)
        return code == 0

    def _file_equals(self, path: str, expected: str, row: dict, unchanged: bool) -> bool:
        """`test "$(cat PATH)" = EXPECTED` on the world model's state: `cat PATH` is simulated right after the
        episode's turns (the check's own turn, which holds EXPECTED, is never asked: schemas/check_turn.py) and
        trajforge compares its content as the shell does (trailing newlines dropped; a missing file reads empty)."""
        predicted = self._predict(Action(kind="shell", content=file_command(path)), row)
        content = "" if predicted.startswith(f"cat: {path}: ") else predicted.rstrip("\n")
        how = f"the predicted content of {path}, compared as the check compares it" + (AT_START if unchanged else "")
        self._details = _decided(how, predicted, expected=expected)
        return content == expected

    def check_details(self) -> dict:
        return self._details

    def starting_state(self, task: Task) -> StartingState | None:
        return self._state

    def instruct(self, instruction: str) -> None:
        """Predict what follows under the task's `instruction` (with the run's own after it), as reset does."""
        self._row["simulation_instruction"] = " ".join(x for x in (instruction, self.instruction) if x)

    def simulation_instruction(self) -> str:
        return self._row.get("simulation_instruction", self.instruction)

    def action_space(self) -> list[dict]:
        return self.tools

    def describe(self) -> dict:
        return {"name": self.name, "backend": "world-model"}

    def close(self) -> None:
        if self._joined:
            self._joined = False
            self.world_model.leave()
        self.messages = []


def tool_result(predicted: str) -> tuple[bool, str]:
    """(is an error, the text) of a predicted MCP tool result: the JSON a server's result is recorded as
    (`content` parts, `structuredContent`, `isError`), or plain text when the prediction is not that JSON."""
    try:
        data = json.loads(predicted)
    except ValueError:
        return False, predicted
    if not isinstance(data, dict):
        return False, predicted
    parts = data.get("content") if isinstance(data.get("content"), list) else []
    texts = [str(p.get("text", "")) for p in parts if isinstance(p, dict)]
    if "structuredContent" in data:
        texts.append(json.dumps(data["structuredContent"], ensure_ascii=False))
    return bool(data.get("isError")), "\n".join(texts)


def _starting_state(task: Task) -> StartingState | None:
    """The task's real starting state, as collectors ground a simulated task (`config.starting_state`)."""
    data = task.config.get("starting_state")
    return StartingState.from_dict(data) if isinstance(data, dict) else None


def _turn(action: Action, observation: str) -> dict:
    return {"action": action.model_dump(), "observation": {"content": observation}}


def _decided(how: str, predicted: str, **found) -> dict:
    return {"decided_by": f"the task's check in the world model: {how}", "predicted": predicted[-2000:], **found}


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return text.lstrip().startswith(("{", "["))
