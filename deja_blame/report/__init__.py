"""Provenance reports for a range of commits (``deja report``).

``build_report`` collects (``collect``), the renderers format: Markdown for a
pull-request comment, JSON for dashboards and CI gates, one self-contained HTML page.
"""

from __future__ import annotations

from deja_blame.report.collect import build_report
from deja_blame.report.model import Report
from deja_blame.report.render_html import render_html
from deja_blame.report.render_json import render_json
from deja_blame.report.render_markdown import MARKER, render_markdown
from deja_blame.suites import is_test_command

__all__ = (
    "MARKER",
    "Report",
    "build_report",
    "is_test_command",
    "render_html",
    "render_json",
    "render_markdown",
)
