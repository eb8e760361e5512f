"""The report as JSON: one document, the schema in ``docs/report.md``."""

from __future__ import annotations

from deja_blame.jsonout import dumps
from deja_blame.report.model import Report


def render_json(report: Report) -> str:
    return dumps(report.to_json()).decode("utf-8")
