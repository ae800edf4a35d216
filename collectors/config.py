"""The typed configuration of a collection run (light to import: the CLI builds it before anything runs)."""

from dataclasses import dataclass


@dataclass(frozen=True)
class CollectConfig:
    """Everything a collection run is decided by; the defaults of `trajforge collect`."""

    suites: tuple[str, ...] = ("terminal", "swe")  # bundled suite names or .yaml paths
    policy: str = "scripted"
    output: str = "data/raw"  # a folder or a URL; the run goes to OUTPUT/<run-id>/
    run_id: str | None = None  # default: derived from the config, so the same command resumes
    repeats: int = 1
    concurrency: int = 2
    shard: str = "0/1"
    retries: int = 2
    max_turns: int = 30
    command_timeout: float = 10.0
    tasks: tuple[str, ...] = ()  # only these task ids
    image: str | None = None  # default: the sandbox base image, built if missing
    seed: int = 0
    explorer_steps: int = 8
    llm_url: str | None = None
    llm_model: str | None = None
    llm_key_env: str = "TRAJFORGE_LLM_API_KEY"  # the variable holding the llm policy's API key
    checkpoint: str | None = None  # the checkpoint policy's model: a trajforge or Hugging Face folder, or smollm2
    temperature: float = 0.7  # the llm and checkpoint policies' sampling temperature; 0 is greedy
    flush_every: int = 8
    faults: str | None = None  # a bundled fault config or a YAML path
    simulate: str | None = None  # URL=MODEL of a world model standing in for every environment
    simulate_key_env: str = "TRAJFORGE_SIMULATE_API_KEY"  # the variable holding that world model's API key
    simulation_instruction: str = ""
    control: str | None = None  # with simulate: a control preset or YAML file, sampled per episode
    simulate_judge: str | None = None  # URL=MODEL of an endpoint judging completion of tasks without a check
    simulate_judge_key_env: str = "TRAJFORGE_SIMULATE_JUDGE_API_KEY"
    simulate_prompt: str = "auto"  # how the world model is asked: auto, plain (a CPT model) or template (SFT, RL)
    simulate_file_check: str = "content"  # a simulated file comparison: decided by content or exit-code
    simulate_max_tokens: int = 512  # the most tokens the world model writes for one observation
    verify_generated: bool = False  # first run every generated task's scripted solution; refuse the run if one fails
