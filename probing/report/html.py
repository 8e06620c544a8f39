"""The report page: one self-contained HTML file (plotly.js embedded once, opens offline).

Order: the model's identity, the summary of claims (only sentences the comparison engine
wrote), what was planned and what was not run, then one section per part with its figure,
its method in one paragraph and what its intervals do not support.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from probing.io import atomic_write_text
from probing.report import parts
from probing.report.plan import Plan, format_seconds

STYLE = """
body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
h1{font-size:1.6em}h2{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;font-size:.9em}td,th{border:1px solid #ddd;padding:.25em .5em;
text-align:left;vertical-align:top}code{font-size:.85em;word-break:break-all}
.limits{color:#555;font-style:italic}.claim{margin:.4em 0}.note{color:#666;font-size:.9em}
details{margin:.5em 0}
"""


def _e(value: Any) -> str:
    return html.escape(str(value))


def _rows(pairs: list[tuple[str, Any]]) -> str:
    return "".join(f"<tr><th>{_e(k)}</th><td>{v}</td></tr>" for k, v in pairs)


def _recorded_architecture(m: dict[str, Any]) -> str:
    """For reports written before ``architecture`` was recorded: the model_type of their
    recorded config (what the encoder reads into ModelInfo.architecture), else the family."""
    model_type = (m["config"] or {}).get("model_type")
    return model_type if isinstance(model_type, str) and model_type else m["family"]


def identity_section(report: dict[str, Any]) -> str:
    m, sw = report["model"], report["software"]
    weights = "<br>".join(
        f"<code>{_e(Path(p).name)}</code> {_e(h)}" for p, h in m["weights_sha256"].items()
    ) or _e(m["weights_note"])
    data = "<br>".join(
        f"{_e(name)} {_e(split)}: <code>{_e(s.get('sha256', s.get('error', '')))}</code>"
        for name, splits in report["data"].items()
        for split, s in splits.items()
    )
    config = json.dumps(m["config"], indent=1) if m["config"] else "none found"
    arch = m.get("architecture") or _recorded_architecture(m)
    rows = [
        ("model", _e(m["model"])),
        ("name, architecture", f"{_e(m['name'])}, {_e(arch)} ({_e(m['family'])} encoder)"),
        ("provenance", _e(m["provenance"])),
        ("layers × width", f"{m['layers']} × {m['dim']}, {m['heads']} heads"),
        ("weights (SHA-256)", weights),
        ("data (SHA-256 per split)", data),
        ("seeds", _e(", ".join(f"{k} {v}" for k, v in report["seeds"].items()))),
        ("software", _e(", ".join(f"{k} {v}" for k, v in sw.items()))),
    ]
    return (
        f"<h2 id='identity'>Model identity</h2><table>{_rows(rows)}</table>"
        f"<details><summary>config</summary><pre>{_e(config)}</pre></details>"
    )


def claims_section(report: dict[str, Any]) -> str:
    items = [
        f"<p class='claim'><b>{_e(parts.TITLES[name])}.</b> {_e(sentence)}</p>"
        for name, sentences in report["claims"].items()
        for sentence in sentences
    ]
    unclaimed = [parts.TITLES[n] for n, s in report["claims"].items() if not s]
    note = (
        f"<p class='note'>No comparative sentence is made for: {_e('; '.join(unclaimed))} "
        "(their figures show values with intervals; the comparison engine writes sentences "
        "for paired layer comparisons only: the probes', cloze accuracy's and the tuned "
        "lens's).</p>"
        if unclaimed
        else ""
    )
    body = "".join(items) or "<p>The comparison engine made no sentence for this report.</p>"
    return f"<h2 id='claims'>Summary of claims</h2>{body}{note}"


def plan_section(plan: Plan, report: dict[str, Any]) -> str:
    head = "<tr><th>part</th><th>size</th><th>estimate</th><th>measured</th><th>note</th></tr>"
    rows = []
    for p in plan.parts:
        t = report["timings"].get(p.name)
        if p.skipped:
            rows.append(
                f"<tr><td>{_e(p.name)}</td><td colspan=3>not run</td><td>{_e(p.skipped)}</td></tr>"
            )
            continue
        note = f"shrunk from {p.full_size}" if p.shrunk else "full size"
        measured = f"{t['seconds']:.1f} s" if t else "–"
        rows.append(
            f"<tr><td>{_e(p.name)}</td><td>{p.size}</td><td>{p.estimate_s:.0f} s</td>"
            f"<td>{measured}</td><td>{note}</td></tr>"
        )
    cal = plan.calibration
    return (
        f"<h2 id='plan'>Plan</h2><p>Budget {format_seconds(plan.budget_s)}; planned "
        f"{plan.estimate_s:.0f} s. Calibration: {cal.seconds_per_sentence * 1000:.1f} ms per "
        f"UD-EWT sentence encoded (machine speed factor {cal.speed:.2f}).</p>"
        f"<table>{head}{''.join(rows)}</table>"
    )


def part_section(name: str, record: dict[str, Any]) -> str:
    fig = parts.figure(name, record["result"])
    div = fig.to_html(full_html=False, include_plotlyjs=False, div_id=f"figure-{name}")
    claims = "".join(f"<p class='claim'>{_e(s)}</p>" for s in parts.claims(name, record["result"]))
    return (
        f"<section id='part-{_e(name)}'><h2>{_e(parts.TITLES[name])}</h2>{div}{claims}"
        f"<p><b>Method.</b> {_e(parts.method(name, record['settings'], record['result']))}</p>"
        f"<p class='limits'>{_e(parts.limits(name))}</p>"
        f"<p class='note'>Data: <code>parts/{_e(name)}.csv</code>, <code>parts/{_e(name)}.json"
        f"</code>; {record['seconds']:.1f} s (estimate {record['estimate_s']:.0f} s).</p></section>"
    )


def write_page(
    path: Path, report: dict[str, Any], records: dict[str, dict[str, Any]], plan: Plan
) -> Path:
    """Write the page atomically."""
    from plotly.offline import get_plotlyjs

    title = f"Layer report: {report['model']['name']}"
    sections = "".join(part_section(n, r) for n, r in records.items())
    page = (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{_e(title)}</title>"
        f"<style>{STYLE}</style><script>{get_plotlyjs()}</script></head><body>"
        f"<h1>{_e(title)}</h1>{identity_section(report)}{claims_section(report)}"
        f"{plan_section(plan, report)}{sections}</body></html>"
    )
    return atomic_write_text(path, page)
