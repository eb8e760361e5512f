"""The share of agents over time: lines added by agents and by people, per week or month.

Built from a report's commits (each commit's introduced lines and the sessions
that wrote them, from its note or the index), grouped by the commit's time in
UTC: ISO weeks (``2026-W48``, from Monday) or months (``2026-11``). Used by
``deja stats --by`` and drawn by the HTML report as an inline SVG chart.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from typing import Any

from deja_blame.models import UNKNOWN_AGENT
from deja_blame.output import counted
from deja_blame.outputs.escape import html as escape
from deja_blame.report.model import Report

PERIODS = ("week", "month")


@dataclass
class Period:
    key: str  # 2026-W48 | 2026-11
    start: str  # its first day, YYYY-MM-DD
    commits: int = 0
    added: int = 0
    by_agents: int = 0
    by_agent: dict[str, int] = field(default_factory=dict)

    @property
    def by_people(self) -> int:
        return self.added - self.by_agents

    @property
    def share(self) -> float:
        return round(self.by_agents / self.added, 4) if self.added else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "period": self.key,
            "start": self.start,
            "commits": self.commits,
            "lines_added": self.added,
            "by_agents": self.by_agents,
            "by_people": self.by_people,
            "share": self.share,
            "by_agent": [
                {"agent": a, "lines": n}
                for a, n in sorted(self.by_agent.items(), key=lambda x: (-x[1], x[0]))
            ],
        }


def period_of(when: datetime, by: str) -> tuple[str, str]:
    """(key, first day) of the week or month ``when`` falls in (UTC)."""
    day = when.astimezone(timezone.utc).date()
    if by == "month":
        return f"{day.year:04d}-{day.month:02d}", date(day.year, day.month, 1).isoformat()
    year, week, weekday = day.isocalendar()
    return f"{year:04d}-W{week:02d}", (day - timedelta(days=weekday - 1)).isoformat()


def share_history(report: Report, by: str) -> list[Period]:
    """The report's commits per period, oldest first."""
    if by not in PERIODS:
        raise ValueError(f"by must be one of {PERIODS}")
    agents = {s.session_id: s.agent for s in report.sessions}
    out: dict[str, Period] = {}
    for c in report.commits:
        when = datetime.fromisoformat(c.time.replace("Z", "+00:00"))
        key, start = period_of(when, by)
        p = out.setdefault(key, Period(key=key, start=start))
        p.commits += 1
        p.added += c.counts.added
        p.by_agents += c.counts.by_sessions
        for sid, n in c.counts.by_session.items():
            agent = agents.get(sid, UNKNOWN_AGENT)
            p.by_agent[agent] = p.by_agent.get(agent, 0) + n
    return [out[k] for k in sorted(out, key=lambda k: out[k].start)]


def choose_period(report: Report) -> str:
    """Weeks for a range of up to half a year, months beyond."""
    times = [datetime.fromisoformat(c.time.replace("Z", "+00:00")) for c in report.commits]
    if times and max(times) - min(times) > timedelta(days=183):
        return "month"
    return "week"


def svg_chart(periods: list[Period], width: int = 720, height: int = 180) -> str:
    """Stacked bars, lines added by agents (below) and by people (above) per period:
    inline SVG, no script, no external asset; every number also in a <title>."""
    if not periods:
        return ""
    top = max(p.added for p in periods) or 1
    pad_l, pad_b, pad_t = 44, 28, 10
    plot_w, plot_h = width - pad_l - 8, height - pad_b - pad_t
    slot = plot_w / len(periods)
    bar = max(2.0, min(40.0, slot * 0.7))
    parts = [
        f'<svg class="history" xmlns="http://www.w3.org/2000/svg" width="{width}"'
        f' height="{height}" viewBox="0 0 {width} {height}" role="img"'
        ' aria-label="Lines added per period: by agents and by people">',
        f'<line x1="{pad_l}" y1="{pad_t + plot_h}" x2="{width - 8}" y2="{pad_t + plot_h}"'
        ' stroke="#999" stroke-width="1"/>',
        f'<text x="{pad_l - 6}" y="{pad_t + 8}" text-anchor="end" font-size="10">{top}</text>',
        f'<text x="{pad_l - 6}" y="{pad_t + plot_h}" text-anchor="end" font-size="10">0</text>',
    ]
    label_every = max(1, len(periods) // 12)
    for i, p in enumerate(periods):
        x = pad_l + i * slot + (slot - bar) / 2
        agents_h = plot_h * p.by_agents / top
        people_h = plot_h * p.by_people / top
        base = pad_t + plot_h
        title = escape(
            f"{p.key}: {p.added} lines added in {counted(p.commits, 'commit')};"
            f" {p.by_agents} by agents ({round(100 * p.share)}%), {p.by_people} by people"
        )
        parts.append(f"<g><title>{title}</title>")
        parts.append(
            f'<rect class="agents" x="{x:.1f}" y="{base - agents_h:.1f}" width="{bar:.1f}"'
            f' height="{agents_h:.1f}" fill="#6d5dfc"/>'
        )
        parts.append(
            f'<rect class="people" x="{x:.1f}" y="{base - agents_h - people_h:.1f}"'
            f' width="{bar:.1f}" height="{people_h:.1f}" fill="#c8ced6"/>'
        )
        parts.append("</g>")
        if i % label_every == 0:
            parts.append(
                f'<text x="{x + bar / 2:.1f}" y="{height - 10}" text-anchor="middle"'
                f' font-size="10">{escape(p.key)}</text>'
            )
    parts.append("</svg>")
    return "".join(parts)
