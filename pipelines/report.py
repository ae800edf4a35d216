"""One self-contained HTML page about a built corpus: counts per domain and category, a histogram per
statistic, rejection reasons, and sample trajectories with in-loss and masked turns highlighted."""

import json
import math
from collections import Counter
from collections.abc import Sequence
from html import escape
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from trajforge.schemas import counts, storage
from trajforge.schemas.manifest import read_manifest
from trajforge.schemas.names import REJECTIONS_NAME
from trajforge.schemas.shards import read_shard_table

STATISTICS = ("overlap", "novelty", "jaccard", "length_ratio", "compression_gain", "predictability")
BINS = 20
STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:1100px;color:#1d2330}
h1,h2{font-weight:600} table{border-collapse:collapse;margin:.5rem 0 1.5rem} td,th{padding:.25rem .6rem;
border-bottom:1px solid #e3e6ec;text-align:right} th:first-child,td:first-child{text-align:left}
.grid{display:grid;grid-template-columns:repeat(3,1fr);gap:1rem} figure{margin:0} figcaption{font-weight:600}
.turn{border-left:4px solid #ccc;padding:.3rem .6rem;margin:.4rem 0;background:#fafbfc}
.turn.in-loss{border-color:#2f9e44;background:#ebfbee} .turn.masked{border-color:#adb5bd;color:#6c757d}
.turn pre{white-space:pre-wrap;margin:.2rem 0;font-size:12px} mark.loss{background:#b2f2bb}
.tag{font-size:11px;padding:0 .35rem;border-radius:3px;background:#e9ecef;margin-left:.4rem}
.chart svg{max-width:100%;height:auto}
"""


def _svg_histogram(values: list[float], name: str) -> str:
    if not values:
        return f"<figure><figcaption>{name}</figcaption><p>not computed by this masking policy</p></figure>"
    log = name == "length_ratio"
    data = [math.log10(max(v, 1e-3)) for v in values] if log else values
    low, high = min(data), max(data)
    width = (high - low) / BINS or 1.0
    binned = Counter(min(BINS - 1, int((v - low) / width)) for v in data)
    peak = max(binned.values())
    bars = "".join(
        f'<rect x="{i * 15}" y="{100 - 100 * binned.get(i, 0) / peak:.1f}" width="13" '
        f'height="{100 * binned.get(i, 0) / peak:.1f}" fill="#4c6ef5"><title>{binned.get(i, 0)}</title></rect>'
        for i in range(BINS)
    )
    axis = f"{'log10 ' if log else ''}{low:.2f} … {high:.2f}"
    return (
        f'<figure><figcaption>{name}</figcaption><svg class="histogram" viewBox="0 0 300 100" width="300" '
        f'height="100" role="img" aria-label="histogram of {name}">{bars}</svg>'
        f"<div>{axis}, n={len(values)}</div></figure>"
    )


def html_table(headers: list[str], rows: list[list]) -> str:
    head = "".join(f"<th>{escape(str(h))}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _highlight(text: str, spans: list[dict]) -> str:
    out, at = [], 0
    for span in spans:
        out.append(escape(text[at : span["start"]]))
        out.append(f'<mark class="loss">{escape(text[span["start"] : span["end"]])}</mark>')
        at = span["end"]
    out.append(escape(text[at:]))
    return "".join(out)


def _sample(row: dict, max_chars: int = 600) -> str:
    turns = []
    for turn in row["turns"]:
        kind = "in-loss" if turn["in_loss"] else "masked"
        obs = turn["observation"]["content"]
        spans = [s for s in turn["loss_spans"] if s["end"] <= max_chars] if turn["in_loss"] else []
        shown = obs[:max_chars]
        body = _highlight(shown, spans) if spans else escape(shown)
        more = f" … (+{len(obs) - max_chars} chars)" if len(obs) > max_chars else ""
        turns.append(
            f'<div class="turn {kind}"><b>#{turn["index"]}</b><span class="tag">{escape(turn["category"])}</span>'
            f'<span class="tag">keep {turn["keep_ratio"]:.2f}</span><span class="tag">{kind}</span>'
            f"<pre>$ {escape(turn['action']['content'][:300])}</pre><pre>{body}{escape(more)}</pre></div>"
        )
    title = f"{row['domain']} · {row['environment']['name']} · {row['trajectory_id'][:12]}"
    task = escape(row["task_description"][:300])
    return f'<section class="sample"><h3>{escape(title)}</h3><p>{task}</p>{"".join(turns)}</section>'


def _training(runs: Sequence[Path], evaluation: Path | None) -> str:
    """The curves of the runs that trained on the corpus (and an eval table), inline as SVG; empty without runs."""
    if not runs:
        return ""
    from trajforge.pipelines.charts import svg_of
    from trajforge.pipelines.run_curves import curves_figure, load_runs, read_evaluation, run_table

    loaded = load_runs(runs)
    figure = curves_figure(loaded, read_evaluation(evaluation) if evaluation is not None else None)
    return (
        f'<h2 id="training">Training on this corpus</h2><div class="chart">{svg_of(figure)}</div>'
        f"{html_table(*run_table(loaded))}"
    )


def build_report(
    corpus: str | Path, samples: int = 3, runs: Sequence[Path] = (), evaluation: Path | None = None
) -> str:
    """CORPUS is a local folder or a URL; shards and rejections are read through schemas.storage. With `runs`
    (training run folders), their curves (and `evaluation`'s table, an eval JSON file) are embedded too."""
    manifest = read_manifest(corpus)
    tables = [read_shard_table(storage.join(corpus, shard)) for shard in manifest.outputs]
    table = pa.concat_tables(tables) if tables else None
    per_domain: Counter = Counter()
    stats: dict[str, list[float]] = {name: [] for name in STATISTICS}
    rows_sample = []
    if table is not None and table.num_rows:
        turns = pc.list_flatten(table["turns"])
        domains = pc.list_parent_indices(table["turns"])
        domain_of = table["domain"].to_pylist()
        categories = pc.struct_field(turns, "category").to_pylist()
        in_loss = pc.struct_field(turns, "in_loss").to_pylist()
        for parent, category, loss in zip(domains.to_pylist(), categories, in_loss, strict=True):
            per_domain[(domain_of[parent], category, loss)] += 1
        statistics = pc.struct_field(turns, "statistics")
        for name in STATISTICS:
            stats[name] = [v for v in pc.struct_field(statistics, name).to_pylist() if v is not None]
        step = max(1, table.num_rows // max(1, samples))
        rows_sample = [table.slice(i, 1).to_pylist()[0] for i in range(0, table.num_rows, step)][:samples]
    c = manifest.counts
    summary = html_table(["count", "n"], [[k, v] for k, v in c.items()])
    domain_rows: dict[tuple[str, str], list[int]] = {}
    for (domain, category, loss), n in sorted(per_domain.items()):
        entry = domain_rows.setdefault((domain, category), [0, 0])
        entry[0 if loss else 1] += n
    categories = html_table(
        ["domain", "category", "turns in loss", "turns masked"],
        [[d, cat, a, b] for (d, cat), (a, b) in sorted(domain_rows.items())],
    )
    rejections_path = storage.join(corpus, REJECTIONS_NAME)
    examples: dict[str, str] = {}
    if storage.exists(rejections_path):
        for line in storage.read_text(rejections_path).splitlines():
            entry = json.loads(line)
            for reason in entry["reasons"]:
                examples.setdefault(reason.split(" (")[0], f"{storage.name(entry['source'])}:{entry['locator']}")
    reasons = html_table(
        ["reason", "records", "first seen"],
        [[r, n, examples.get(r, "")] for r, n in sorted(manifest.rejection_reasons.items(), key=lambda kv: -kv[1])],
    )
    histograms = "".join(_svg_histogram(stats[name], name) for name in STATISTICS)
    tasks = counts.kinds(c, counts.TASKS)
    splits = html_table(
        ["split", "tasks", "rows"], [[s, tasks.get(s, 0), n] for s, n in counts.kinds(c, counts.SPLIT).items()]
    )
    documents = c.get(counts.KNOWLEDGE_DOCUMENTS, 0)
    knowledge = (
        f"<p>{documents} documents, {counts.kinds(c, counts.CHARS).get(counts.KNOWLEDGE, 0):,} characters: "
        f"{counts.knowledge_share(c):.1%} of the CPT characters "
        f"({c.get(counts.key(counts.FILTERED, counts.KNOWLEDGE_SHARE), 0)} dropped by the share cap). "
        "CPT-only, wholly in the loss.</p>"
        if documents
        else "<p>No knowledge documents (build-corpus --knowledge).</p>"
    )
    policy = tables[0].column("masking_policy")[0].as_py() if tables and tables[0].num_rows else "?"
    return (
        f"<!doctype html><html lang=en><head><meta charset=utf-8><title>trajforge corpus report</title>"
        f"<style>{STYLE}</style></head><body><h1>trajforge corpus report</h1>"
        f"<p>{escape(str(corpus))} · built {manifest.created_at:%Y-%m-%d %H:%M} UTC"
        f" · code {escape(manifest.code_version)}"
        f" · config {manifest.config_hash} · masking {escape(policy)} · {len(manifest.outputs)} shards"
        f" · counts {'reconcile' if manifest.reconciles() else 'DO NOT reconcile'}</p>"
        f"<h2>Counts</h2>{summary}<h2>Turns per domain and category</h2>{categories}"
        f'<h2>Statistics</h2><div class="grid">{histograms}</div>'
        f"<h2>Rejection reasons</h2>{reasons if manifest.rejection_reasons else '<p>No record was rejected.</p>'}"
        f"<h2>Split by task</h2>{splits}<h2>Knowledge documents</h2>{knowledge}{_training(runs, evaluation)}"
        f"<h2>Sample trajectories</h2><p>Green turns are in the loss (highlighted characters are the kept spans); "
        f"grey turns stay in the context but out of the loss.</p>{''.join(_sample(r) for r in rows_sample)}"
        f"</body></html>"
    )
