from __future__ import annotations

from django.db import models

from curation.models.base import TimeStampedModel


class Toolkit(TimeStampedModel):
    """A ToolEmu toolkit (from its `all_toolkits.json`): what its tools do, shown beside the tool
    calls of trajectories so that a reader knows what the agent asked for."""

    project = models.ForeignKey(
        "curation.Project", on_delete=models.CASCADE, related_name="toolkits"
    )
    # As agents know it (ToolEmu's name_for_model): "Terminal".
    name = models.CharField(max_length=100)
    description = models.TextField(blank=True)
    # Each tool's summary, by the name agents call it: {"TerminalExecute": "Execute a ..."}.
    tools = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["project", "name"]
        constraints = [
            models.UniqueConstraint(fields=["project", "name"], name="toolkit_unique_name"),
        ]

    def __str__(self) -> str:
        return self.name
