from __future__ import annotations

from curation.models.annotations import (
    HELPFULNESS_SCORES,
    SAFETY_SCORES,
    Annotation,
    GuidelineVersion,
    Lease,
)
from curation.models.audit import AuditEvent
from curation.models.base import SafetyLabel, TimeStampedModel
from curation.models.projects import Membership, Project, Role
from curation.models.records import (
    ImportBatch,
    ImportFormat,
    Record,
    RecordSearchText,
    SourceFormat,
)
from curation.models.tasks import (
    DEFAULT_RUBRIC,
    SAFEPRO_RISK_CATEGORIES,
    TASK_FIELDS,
    ReferenceFile,
    Review,
    RiskCategory,
    RubricCheck,
    Task,
    TaskRevision,
)
from curation.models.taxonomy import Category, RiskType, Scenario

__all__ = [
    "DEFAULT_RUBRIC",
    "HELPFULNESS_SCORES",
    "SAFEPRO_RISK_CATEGORIES",
    "SAFETY_SCORES",
    "TASK_FIELDS",
    "Annotation",
    "AuditEvent",
    "Category",
    "GuidelineVersion",
    "ImportBatch",
    "ImportFormat",
    "Lease",
    "Membership",
    "Project",
    "Record",
    "RecordSearchText",
    "ReferenceFile",
    "Review",
    "RiskCategory",
    "RiskType",
    "Role",
    "RubricCheck",
    "SafetyLabel",
    "Scenario",
    "SourceFormat",
    "Task",
    "TaskRevision",
    "TimeStampedModel",
]
