from __future__ import annotations

from curation.models.audit import AuditEvent
from curation.models.base import SafetyLabel, TimeStampedModel
from curation.models.projects import Membership, Project, Role
from curation.models.records import ImportBatch, ImportFormat, Record
from curation.models.taxonomy import Category, RiskType, Scenario

__all__ = [
    "AuditEvent",
    "Category",
    "ImportBatch",
    "ImportFormat",
    "Membership",
    "Project",
    "Record",
    "RiskType",
    "Role",
    "SafetyLabel",
    "Scenario",
    "TimeStampedModel",
]
