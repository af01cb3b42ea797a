"""report.html: one self-contained page a person browses (no network, no external file: the
styles, the script and the forest plot are inlined). Verdict first: the first screen holds
the plan, the freeze and whether its record was committed before the run, a banner with the
predictions held, failed and undecided (the failed ones named), and the forest plot. Then
the headline tables, each scrolling inside its own box (the page itself never scrolls
sideways), and every pair with its status, diff, witness and miss cause, filterable by arm,
operator, target, tool and status; a pair's diff and a long witness open in place. Survivors
first: the pairs of a defect-injecting arm (closed or open world) whose mutant survived
(missed; live ones, the escapes, before the rest); then flagged controls (false positives),
the undecided, the infra errors, and last what went right (detected mutants, controls not
flagged). The pair list and its counts come from the ledger frame; the page is deterministic
(no dates): the same ledger, the same bytes.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence

import pandas as pd

from harness.analysis.predictions import PredictionRow
from harness.analysis.render import text_frame
from harness.analysis.runs import RunMeta
from harness.analysis.table_model import Table
from harness.analysis.verdict import describe, verdict_of
from harness.execution.draw import Corpus

FILTERS = ("arm_kind", "arm", "operator", "target", "tool", "status")
DEFECT_ARMS = ("closed_world", "open_world")
UNDECIDED = ("untestable", "timeout", "crash", "compile_error")


_STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 1em 1.5em; color: #222; }
h1 { font-size: 1.3em; margin: 0 0 .3em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
p.freeze { margin: 0 0 .5em; color: #333; }
#verdict { border-radius: 4px; padding: .5em .8em; margin: .4em 0; }
#verdict.held { background: #e6f4ea; border: 1px solid #7bb58a; }
#verdict.failed { background: #fdecea; border: 1px solid #d77; }
#verdict.none { background: #f1f1f1; border: 1px solid #bbb; }
#verdict .counts { font-size: 1.15em; font-weight: bold; }
#verdict ul { margin: .3em 0 0; padding-left: 1.2em; }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; margin: .4em 0; }
#pair-table td { overflow-wrap: anywhere; }
table.headline th { white-space: nowrap; }
th, td { border-bottom: 1px solid #ddd; padding: 2px 6px; text-align: left;
  vertical-align: top; }
table.headline td { font-variant-numeric: tabular-nums; white-space: nowrap; }
.notes { color: #555; font-size: .9em; max-width: 70em; }
.counts span { display: inline-block; margin-right: 1em; }
#filters label { margin-right: 1em; }
tr.pair.survivor td.status { color: #b00; font-weight: bold; }
tr.pair.detected td.status { color: #070; }
pre.diff { margin: 0; font-size: 12px; white-space: pre-wrap; }
pre.diff .add { background: #e6ffec; } pre.diff .del { background: #ffebe9; }
img.forest { max-width: 100%; max-height: 44vh; }
#pair-table td:nth-child(8) { min-width: 16em; max-width: 28em; }
details summary { cursor: pointer; }
"""

_SCRIPT = """
const rows = Array.from(document.querySelectorAll('tr.pair'));
const selects = Array.from(document.querySelectorAll('#filters select'));
function applyFilters() {
  let shown = 0;
  for (const row of rows) {
    const keep = selects.every(s => s.value === '' || row.dataset[s.name] === s.value);
    row.hidden = !keep;
    if (keep) shown += 1;
  }
  document.getElementById('shown').textContent = String(shown);
}
for (const s of selects) s.addEventListener('change', applyFilters);
applyFilters();
"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _diff_html(diff: str | None) -> str:
    if not diff:
        return "<em>no diff (the pair is not in the drawn corpus)</em>"
    lines = []
    for line in diff.splitlines():
        kind = "add" if line.startswith("+") else "del" if line.startswith("-") else ""
        if line.startswith(("+++", "---")):
            kind = ""
        lines.append(f'<span class="{kind}">{_e(line)}</span>' if kind else _e(line))
    return (
        '<details><summary>diff</summary><pre class="diff">' + "\n".join(lines) + "</pre></details>"
    )


def _table_html(table: Table) -> str:
    frame = text_frame(table, "—")
    body = frame.to_html(index=False, escape=True, border=0, classes="headline")
    notes = "".join(f"<li>{_e(note)}</li>" for note in table.notes)
    return (
        f'<h2 id="table-{_e(table.name)}">{_e(table.heading)}</h2>\n'
        f'<div class="scroll">{body}</div>\n<ul class="notes">{notes}</ul>'
    )


WITNESS_INLINE = 160  # characters of a witness shown before it opens in place


def _witness_html(witness: str) -> str:
    if len(witness) <= WITNESS_INLINE:
        return _e(witness)
    return f"<details><summary>{_e(witness[:WITNESS_INLINE])}…</summary>{_e(witness)}</details>"


def _freeze_html(run: RunMeta) -> str:
    record = run.freeze_record
    if run.post_hoc:
        said = "post hoc: no freeze to prove"
    elif record is None:
        said = "where its record was committed was not recorded (a run before that was)"
    elif record.status == "committed" and record.commit:
        said = f"record committed in {record.commit[:12]} before the run started"
    else:
        said = record.warning() or record.status
    return f'<p class="freeze">freeze <code>{_e(run.freeze_id)}</code>: {_e(said)}</p>'


def _verdict_html(predictions: Sequence[PredictionRow] | None) -> str:
    if predictions is None:  # a comparison checker's run: the plan's predictions are not its
        return (
            '<div id="verdict" class="none"><span class="counts">no predictions: a run '
            "under a comparison checker scores none</span></div>"
        )
    verdict = verdict_of(predictions)
    kind = "failed" if verdict.failed else "held" if verdict.scored else "none"
    failed = "".join(f"<li>{_e(describe(p))}</li>" for p in verdict.failed)
    return (
        f'<div id="verdict" class="{kind}"><span class="counts">{_e(verdict.counts())}'
        "</span>"
        + (f"<ul>{failed}</ul>" if failed else "")
        + ' <a href="#table-predictions">every prediction</a></div>'
    )


def is_survivor(frame: pd.DataFrame) -> pd.Series:
    """A mutant of a defect-injecting arm that the checker missed."""
    return frame["arm_kind"].isin(DEFECT_ARMS) & (frame["status"] == "missed")


def survivors_first(frame: pd.DataFrame) -> pd.DataFrame:
    """The pairs in the page's order (module docstring); ties by arm, operator, target, tool,
    pair id."""
    survivor = is_survivor(frame)
    control = ~frame["arm_kind"].isin(DEFECT_ARMS)
    status = frame["status"].astype(str)
    rank = pd.Series(5, index=frame.index)
    rank[status == "infra_error"] = 4
    rank[status.isin(UNDECIDED)] = 3
    rank[control & (status == "detected")] = 2
    rank[survivor] = 1
    rank[survivor & frame["escape"]] = 0
    order = ["arm", "operator", "target", "tool", "pair_id"]
    keyed = frame[order].astype(str).assign(_rank=rank)
    return frame.loc[keyed.sort_values(["_rank", *order], kind="stable").index]


def render_html(
    frame: pd.DataFrame,
    tables: Sequence[Table],
    run: RunMeta,
    corpus: Corpus | None,
    forest_png: bytes | None,
    predictions: Sequence[PredictionRow] | None = (),
    sections: Sequence[str] = (),
) -> str:
    """The page; `sections`: HTML sections placed after the forest plot (contract coverage)."""
    diffs = {p.pair_id: p.mutant.diff for p in corpus.pairs} if corpus else {}
    post_hoc = " — POST HOC" if run.post_hoc or frame["post_hoc"].any() else ""
    title = f"{run.plan} / {run.run} (freeze {run.freeze_id}){post_hoc}"
    # a short, altered or unfinished ledger says so here as in every other output
    for label in (run.unfinished(len(frame)), run.incomplete):
        if label:
            title = f"{label.upper()}: {title}"
    statuses = frame["status"].astype(str).value_counts()
    survivors = int(is_survivor(frame).sum())
    counts = "".join(
        f'<span>{_e(s)}: <b id="count-{_e(s)}">{int(statuses.get(s, 0))}</b></span>'
        for s in frame["status"].cat.categories
    )
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{_e(title)}</title><style>{_STYLE}</style></head><body>",
        f"<h1>{_e(title)}</h1>",
        _freeze_html(run),
        _verdict_html(predictions),
    ]
    if forest_png:
        data = base64.b64encode(forest_png).decode("ascii")
        parts.append(
            '<h2 id="forest">Closed-world recall per operator</h2>'
            f'<img class="forest" alt="forest plot" src="data:image/png;base64,{data}">'
        )
    parts += [
        f'<p class="counts">pairs: <b id="count-pairs">{len(frame)}</b> — {counts} — '
        f'survivors: <b id="count-survivors">{survivors}</b></p>',
        "<p>Jump to: "
        + " · ".join(f'<a href="#table-{_e(t.name)}">{_e(t.title)}</a>' for t in tables)
        + f' · <a href="#pairs">every pair, survivors first ({survivors} survivors)</a></p>',
    ]
    parts += [_table_html(t) for t in tables]
    parts += sections  # e.g. contract coverage, after the tables
    parts.append('<h2 id="pairs">Every pair, survivors first</h2><p id="filters">')
    for name in FILTERS:
        values = sorted({str(v) for v in frame[name].dropna()})
        options = "".join(f'<option value="{_e(v)}">{_e(v)}</option>' for v in values)
        parts.append(
            f'<label>{name} <select name="{name}"><option value="">all</option>'
            f"{options}</select></label>"
        )
    parts.append(f'</p><p>shown: <b id="shown">{len(frame)}</b> of {len(frame)} pairs</p>')
    header = ("pair", "arm", "operator", "target", "tool", "status", "miss cause", "witness")
    parts.append(
        '<div class="scroll"><table id="pair-table"><thead><tr>'
        + "".join(f"<th>{h}</th>" for h in (*header, "diff"))
        + "</tr></thead><tbody>"
    )
    ordered = survivors_first(frame)
    flags = is_survivor(ordered).tolist()
    for row, survivor in zip(ordered.itertuples(index=False), flags, strict=True):
        survivor_class = " survivor" if survivor else ""
        data = " ".join(f'data-{name}="{_e(getattr(row, name))}"' for name in FILTERS)
        witness = row.witness if isinstance(row.witness, str) else ""
        if isinstance(row.error, str):
            witness = (witness + " " if witness else "") + f"error: {row.error}"
        cause = row.miss_cause if isinstance(row.miss_cause, str) else ""
        live = " (escape)" if row.escape else ""
        if row.arm_kind not in DEFECT_ARMS:  # a control: flagged is the wrong answer
            live = " (false positive)" if row.status == "detected" else " (not flagged)"
        parts.append(
            f'<tr class="pair {_e(row.status)}{survivor_class}" {data}>'
            f"<td><code>{_e(row.pair_id)}</code></td><td>{_e(row.arm)}</td>"
            f"<td>{_e(row.operator)}</td><td>{_e(row.target)}</td><td>{_e(row.tool)}</td>"
            f'<td class="status">{_e(row.status)}{live}</td><td>{_e(cause)}</td>'
            f"<td>{_witness_html(witness)}</td><td>{_diff_html(diffs.get(row.pair_id))}</td></tr>"
        )
    parts += ["</tbody></table></div>", f"<script>{_SCRIPT}</script>", "</body></html>"]
    return "\n".join(parts) + "\n"
