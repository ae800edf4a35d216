"""Where a training run's metrics go, for every stage alike (CPT, SFT, agent SFT, RL, agent RL): each step's line to
RUN/metrics.jsonl (what a resumed run, eval's RL reward trend and `trajforge plot` read), and with
`--report-to tensorboard` the same numbers as TensorBoard scalars under RUN/tb/. The stages write a line through
one `MetricsLog`; none of them knows which reporters are on."""

import importlib.util
import json
import math
from pathlib import Path

METRICS_NAME = "metrics.jsonl"
TENSORBOARD_DIR = "tb"
REPORTERS = ("none", "tensorboard")
MISSING_TENSORBOARD = (
    "--report-to tensorboard needs the tensorboard package: pip install 'trajforge[tensorboard]' (or tensorboard)"
)


def scalars(metrics: dict, prefix: str = "") -> dict[str, float]:
    """The numbers of a metrics line by TensorBoard tag: nested dicts flattened with "/" (agent RL's
    `outcomes/success`), booleans as 0/1; the step itself, text (a warning) and missing values (None) left out."""
    out: dict[str, float] = {}
    for key, value in metrics.items():
        tag = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(scalars(value, f"{tag}/"))
        elif isinstance(value, bool | int | float) and tag != "step" and not _nan(value):
            out[tag] = float(value)
    return out


def check_reporter(report_to: str) -> None:
    """A ValueError saying what is wrong with --report-to (an unknown name, or tensorboard not installed)."""
    if report_to not in REPORTERS:
        raise ValueError(f"--report-to {report_to!r}: choose {', '.join(REPORTERS)}")
    if report_to == "tensorboard" and importlib.util.find_spec("tensorboard") is None:
        raise ValueError(MISSING_TENSORBOARD)


def _nan(value) -> bool:
    return isinstance(value, float) and math.isnan(value)


class MetricsLog:
    """A run folder's metrics: `write(line)` appends the line to metrics.jsonl and hands it to each reporter.
    A run resumed from its checkpoint at step `resumed_from` first drops the lines (and TensorBoard points) of the
    steps after it, which the stopped run wrote and the resumed one writes again. That and the TensorBoard writer
    wait for the first line, so a process that never writes (a DDP rank other than 0) touches no file. Use it as a
    context manager, or call `close()`."""

    def __init__(self, run_dir: Path | str, report_to: str = "none", resumed_from: int = 0):
        check_reporter(report_to)
        self.run_dir, self.report_to, self.resumed_from = Path(run_dir), report_to, resumed_from
        self._tensorboard = None
        self._trimmed = False

    def write(self, metrics: dict) -> None:
        if not self._trimmed:
            self._drop_lines_after(self.resumed_from)
        with open(self.run_dir / METRICS_NAME, "a") as f:
            f.write(json.dumps(metrics) + "\n")
        if self.report_to == "tensorboard":
            writer = self._tensorboard or self._open_tensorboard()
            for tag, value in scalars(metrics).items():
                writer.add_scalar(tag, value, global_step=int(metrics["step"]))
            writer.flush()  # a step's numbers are on disk when the step is done, as in metrics.jsonl

    def _drop_lines_after(self, step: int) -> None:
        path = self.run_dir / METRICS_NAME
        if path.exists():
            kept = [line for line in read_metrics(path) if line["step"] <= step]
            path.write_text("".join(json.dumps(line) + "\n" for line in kept))
        self._trimmed = True

    def _open_tensorboard(self):
        from torch.utils.tensorboard import SummaryWriter  # torch's writer; it needs the tensorboard package

        self._tensorboard = SummaryWriter(log_dir=str(self.run_dir / TENSORBOARD_DIR), purge_step=self.resumed_from + 1)
        return self._tensorboard

    def close(self) -> None:
        if self._tensorboard is not None:
            self._tensorboard.close()
            self._tensorboard = None

    def __enter__(self) -> "MetricsLog":
        return self

    def __exit__(self, *_exc) -> None:
        self.close()


def read_metrics(path: Path | str) -> list[dict]:
    """The lines of a metrics.jsonl, in order."""
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
