from __future__ import annotations

from curation.models.accounts import ApiToken, Invitation
from curation.models.audit import AuditEvent
from curation.models.base import TimeStampedModel
from curation.models.projects import Membership, Project, Role
from curation.models.records import (
    ImportBatch,
    ImportFormat,
    Record,
    RecordChange,
    RecordSearchText,
)
from curation.models.taxonomy import Category, RiskType, Scenario
from curation.models.toolkits import Toolkit

__all__ = [
    "ApiToken",
    "AuditEvent",
    "Category",
    "ImportBatch",
    "ImportFormat",
    "Invitation",
    "Membership",
    "Project",
    "Record",
    "RecordChange",
    "RecordSearchText",
    "RiskType",
    "Role",
    "Scenario",
    "TimeStampedModel",
    "Toolkit",
]
