"""Cline (the VS Code extension ``saoudrizwan.claude-dev``): one folder per task,
``<config>/<editor>/User/globalStorage/saoudrizwan.claude-dev/tasks/<task id>/``, in
every VS Code build and fork; its command line and JetBrains builds keep the same
folders in ``~/.cline/data/tasks`` (``CLINE_DATA_DIR``, else ``$CLINE_DIR/data``, moves
it). Read by ``cline.reader``, which Roo Code and Kilo Code share."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from deja_blame.transcripts.agent import Handoff
from deja_blame.transcripts.cline.tasks import task_agent

DATA_ENV = "CLINE_DATA_DIR"
DIR_ENV = "CLINE_DIR"


def own_store(env: Mapping[str, str], home: Path) -> list[Path]:
    """The command line's (and JetBrains') store."""
    if env.get(DATA_ENV):
        return [Path(env[DATA_ENV])]
    return [(Path(env[DIR_ENV]) if env.get(DIR_ENV) else home / ".cline") / "data"]


PLUGIN = task_agent(
    id="cline",
    label="cline",
    display_name="Cline",
    extension="saoudrizwan.claude-dev",
    aliases=("claude-dev",),
    own_store=own_store,
    own_env=(DATA_ENV, DIR_ENV),
    own_where="~/.cline/data/tasks",
    folder_marker=b"# Current Working Directory (",
    # ``cline "PROMPT"``: the command line's interactive task, begun with the prompt
    handoff=Handoff("cline", (), "install Cline's command line: npm install -g cline"),
)

__all__ = ["PLUGIN"]
