"""Panels: several runs over the same records combined into one verdict per record.

A panel is a run of its own kind (`JudgeRun.Source.PANEL`) whose verdicts are computed from its
members' when it is made, so that every page and report that reads runs and verdicts (quality,
disagreements, releases) takes it as it takes any run. This row says how it was combined.
"""

from __future__ import annotations

from django.db import models


class Panel(models.Model):
    class Rule(models.TextChoices):
        MAJORITY = "majority", "Majority of the members' answers"
        ANY_UNSAFE = "any_unsafe", "Unsafe if any member says unsafe"

    run = models.OneToOneField(
        "judging.JudgeRun", on_delete=models.CASCADE, primary_key=True, related_name="panel"
    )
    rule = models.CharField(max_length=12, choices=Rule.choices)
    members = models.ManyToManyField(
        "judging.JudgeRun", through="PanelMember", related_name="panels"
    )

    def __str__(self) -> str:
        return f"{self.run} ({self.get_rule_display().lower()})"


class PanelMember(models.Model):
    panel = models.ForeignKey(Panel, on_delete=models.CASCADE, related_name="memberships")
    # A member run cannot be deleted from under the panel its verdicts were computed from,
    # unless the panel goes with it (a project deleted in the admin).
    run = models.ForeignKey("judging.JudgeRun", on_delete=models.RESTRICT, related_name="+")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["panel", "run"], name="panelmember_once"),
        ]

    def __str__(self) -> str:
        return f"{self.run_id} in {self.panel_id}"
