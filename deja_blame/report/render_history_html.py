"""``deja stats --by week|month --html``: the share of agents over time as one page.

Self-contained like the report (``render_html``): inline CSS and SVG, no script,
no external asset, a Content-Security-Policy that forbids both; every name from
the repository or a transcript (agents, models) goes through ``html.escape``.
Three views of the same periods: lines added by agents and by people (stacked
bars), the lines of each agent (stacked, one colour per agent, a legend), and
the share as a line; then the numbers as a table.
"""

from __future__ import annotations

from deja_blame.outputs.escape import html as html_text
from deja_blame.report.history import Period, svg_chart
from deja_blame.report.render_html import CSP, _hue
from deja_blame.transcripts.registry import label_of

WIDTH, HEIGHT = 720, 200
PAD_L, PAD_B, PAD_T, PAD_R = 44, 28, 12, 8


# the HTML reports' escaping of every field (outputs/escape.py)
e = html_text


def _agents(periods: list[Period]) -> list[str]:
    """Agents by lines over all periods, most first."""
    total: dict[str, int] = {}
    for p in periods:
        for a, n in p.by_agent.items():
            total[a] = total.get(a, 0) + n
    return sorted(total, key=lambda a: (-total[a], a))


def _colour(i: int) -> str:
    return f"hsl({_hue(i):.0f} 60% 50%)"


def _labels(periods: list[Period], slot: float) -> list[str]:
    every = max(1, len(periods) // 12)
    return [
        f'<text x="{PAD_L + i * slot + slot / 2:.1f}" y="{HEIGHT - 10}" text-anchor="middle"'
        f' font-size="10">{e(p.key)}</text>'
        for i, p in enumerate(periods)
        if i % every == 0
    ]


def agents_chart(periods: list[Period]) -> str:
    """Per period, each agent's lines stacked (one colour per agent)."""
    agents = _agents(periods)
    if not periods or not agents:
        return ""
    top = max(p.by_agents for p in periods) or 1
    plot_w, plot_h = WIDTH - PAD_L - PAD_R, HEIGHT - PAD_B - PAD_T
    slot = plot_w / len(periods)
    bar = max(2.0, min(40.0, slot * 0.7))
    base = PAD_T + plot_h
    parts = [
        f'<svg class="agents-chart" xmlns="http://www.w3.org/2000/svg" width="{WIDTH}"'
        f' height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" role="img"'
        ' aria-label="Lines added per period by each agent">',
        f'<line x1="{PAD_L}" y1="{base}" x2="{WIDTH - PAD_R}" y2="{base}" stroke="#999"/>',
        f'<text x="{PAD_L - 6}" y="{PAD_T + 8}" text-anchor="end" font-size="10">{top}</text>',
        f'<text x="{PAD_L - 6}" y="{base}" text-anchor="end" font-size="10">0</text>',
    ]
    for i, p in enumerate(periods):
        x = PAD_L + i * slot + (slot - bar) / 2
        y = float(base)
        for j, agent in enumerate(agents):
            n = p.by_agent.get(agent, 0)
            if not n:
                continue
            h = plot_h * n / top
            y -= h
            parts.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar:.1f}" height="{h:.1f}"'
                f' fill="{_colour(j)}"><title>{e(f"{p.key}: {label_of(agent)} {n} lines")}</title></rect>'
            )
    parts += _labels(periods, slot)
    parts.append("</svg>")
    return "".join(parts)


def share_chart(periods: list[Period]) -> str:
    """The share of agents per period, 0-100 %, as a line with a dot per period."""
    if not periods:
        return ""
    plot_w, plot_h = WIDTH - PAD_L - PAD_R, HEIGHT - PAD_B - PAD_T
    slot = plot_w / len(periods)
    base = PAD_T + plot_h
    points = [
        (PAD_L + i * slot + slot / 2, base - plot_h * p.share, p) for i, p in enumerate(periods)
    ]
    parts = [
        f'<svg class="share-chart" xmlns="http://www.w3.org/2000/svg" width="{WIDTH}"'
        f' height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" role="img"'
        ' aria-label="Share of the lines added written by agents, per period">',
        f'<line x1="{PAD_L}" y1="{base}" x2="{WIDTH - PAD_R}" y2="{base}" stroke="#999"/>',
        f'<line x1="{PAD_L}" y1="{PAD_T}" x2="{WIDTH - PAD_R}" y2="{PAD_T}" stroke="#ddd"'
        ' stroke-dasharray="3 3"/>',
        f'<text x="{PAD_L - 6}" y="{PAD_T + 8}" text-anchor="end" font-size="10">100%</text>',
        f'<text x="{PAD_L - 6}" y="{base}" text-anchor="end" font-size="10">0%</text>',
        '<polyline fill="none" stroke="#6d5dfc" stroke-width="2" points="'
        + " ".join(f"{x:.1f},{y:.1f}" for x, y, _ in points)
        + '"/>',
    ]
    for x, y, p in points:
        label = e(f"{p.key}: {round(100 * p.share)}% of {p.added} lines by agents")
        parts.append(
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3.5" fill="#6d5dfc"><title>{label}</title></circle>'
        )
    parts += _labels(periods, slot)
    parts.append("</svg>")
    return "".join(parts)


STYLE = """
:root{color-scheme:light dark;--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--bg:#fff;--card:#f6f8fa}
@media (prefers-color-scheme: dark){:root{--fg:#e6edf3;--muted:#9198a1;--line:#3d444d;
--bg:#0d1117;--card:#161b22}}
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);
background:var(--bg);margin:0 auto;max-width:800px;padding:24px}
h1{font-size:24px;margin:0 0 4px}h2{font-size:18px;margin-top:28px}
svg{max-width:100%;height:auto}svg text{fill:var(--fg)}
.muted{color:var(--muted)}
.cards{display:flex;gap:12px;flex-wrap:wrap;margin:16px 0}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:10px 16px;
min-width:160px}.card .num{font-size:26px;font-weight:600}
.legend span{display:inline-block;margin-right:14px}
.legend i{display:inline-block;width:11px;height:11px;border-radius:2px;margin-right:5px;
vertical-align:-1px}
table{border-collapse:collapse;width:100%;font-size:14px}
th,td{text-align:right;padding:4px 8px;border-bottom:1px solid var(--line)}
th:first-child,td:first-child,td:last-child,th:last-child{text-align:left}
"""


def render_history_html(periods: list[Period], by: str, spec: str, tip: str | None) -> str:
    added = sum(p.added for p in periods)
    by_agents = sum(p.by_agents for p in periods)
    share = f"{100 * by_agents / added:.1f}%" if added else "-"
    agents = _agents(periods)
    legend = "".join(
        f'<span><i style="background:{_colour(j)}"></i>{e(label_of(a))}</span>'
        for j, a in enumerate(agents)
    )
    rows = "".join(
        f"<tr><td>{e(p.key)}</td><td>{p.commits}</td><td>{p.added:,}</td>"
        f"<td>{p.by_agents:,}</td><td>{round(100 * p.share)}%</td><td>"
        + e(
            ", ".join(
                f"{label_of(a)} {n:,}" for a, n in sorted(p.by_agent.items(), key=lambda x: -x[1])
            )
        )
        + "</td></tr>"
        for p in periods
    )
    where = e(spec) + (f" at <code>{e(tip[:12])}</code>" if tip else "")
    body = (
        '<p class="muted">No commits in this range.</p>'
        if not periods
        else f"""<div class="cards">
<div class="card"><div class="num" id="added">{added:,}</div>lines added</div>
<div class="card"><div class="num" id="by-agents">{by_agents:,}</div>by agents</div>
<div class="card"><div class="num" id="share">{share}</div>share</div>
</div>
<h2>Lines added, by agents (dark) and people (light)</h2>
{svg_chart(periods, WIDTH, HEIGHT)}
<h2>By agent</h2>
<div class="legend">{legend}</div>
{agents_chart(periods)}
<h2>Share of agents</h2>
{share_chart(periods)}
<h2>The numbers</h2>
<table id="periods"><thead><tr><th>{e(by)}</th><th>commits</th><th>added</th><th>by agents</th>
<th>share</th><th>by agent</th></tr></thead><tbody>{rows}</tbody></table>"""
    )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>deja stats: the share of agents by {e(by)}</title>
<style>{STYLE}</style></head>
<body><h1>The share of agents, by {e(by)}</h1>
<p class="muted">Lines the commits of {where} added, by agent sessions and by people
(deja stats --by {e(by)}).</p>
{body}
</body></html>
"""
