"""manage.py seed_demo: the demo users, project and records a newcomer starts from."""

from __future__ import annotations

import io
import json
import re
import stat
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from curation.models import ImportBatch, ImportFormat, Membership, Project
from curation.services.imports import import_path
from curation.services.projects import project_create
from tests.factories import PASSWORD, UserFactory

DEMO_DATA = Path(__file__).resolve().parents[2] / "curation" / "demo" / "data"
DEMO_USERS = {
    "admin": None,
    "demo-annotator": "annotator",
    "demo-author": "author",
    "demo-reviewer": "reviewer",
    "demo-manager": "manager",
}
RECORD_FIELDS = [
    "id",
    "scenario",
    "profile",
    "goal",
    "contents",
    "label",
    "risk_description",
    "attack_type",
]


def seed(url: str = "http://127.0.0.1:8765/") -> str:
    out = io.StringIO()
    call_command("seed_demo", url=url, stdout=out)
    return out.getvalue()


def printed_passwords(output: str) -> dict[str, str]:
    """{username: password} from the table seed_demo prints."""
    rows = re.findall(r"^  (admin|demo-[a-z]+) .*  ([\w-]+)$", output, re.MULTILINE)
    return dict(rows)


def demo_records() -> list[tuple[Path, dict]]:
    return [
        (path, record)
        for path in sorted(DEMO_DATA.glob("*/*.json"))
        for record in json.loads(path.read_text())
    ]


@pytest.fixture
def var_dir(settings, tmp_path: Path) -> Path:
    settings.VAR_DIR = tmp_path
    return tmp_path


def test_seeding_twice_gives_the_same_users_project_records_and_passwords(
    db: None, var_dir: Path
) -> None:
    first = seed()
    records_after_first = Project.objects.get(slug="demo").records.count()
    second = seed()

    User = get_user_model()
    assert set(User.objects.values_list("username", flat=True)) == set(DEMO_USERS)
    assert User.objects.get(username="admin").is_superuser
    assert Project.objects.filter(slug="demo").count() == 1
    project = Project.objects.get(slug="demo")
    for username, role in DEMO_USERS.items():
        if role is not None:
            assert Membership.objects.filter(
                project=project, user__username=username, role=role
            ).exists()
    assert records_after_first == len(demo_records())
    assert project.records.count() == records_after_first
    passwords = printed_passwords(first)
    assert set(passwords) == set(DEMO_USERS)
    assert printed_passwords(second) == passwords
    for username, password in passwords.items():
        assert User.objects.get(username=username).check_password(password), username


def test_it_prints_the_url_and_keeps_the_passwords_in_a_private_file(
    db: None, var_dir: Path
) -> None:
    output = seed("http://127.0.0.1:8765")

    assert "http://127.0.0.1:8765/login/" in output
    passwords_file = var_dir / "demo-passwords.json"
    assert json.loads(passwords_file.read_text()) == printed_passwords(output)
    assert stat.S_IMODE(passwords_file.stat().st_mode) == 0o600


def test_it_keeps_the_password_of_a_user_who_existed_before(db: None, var_dir: Path) -> None:
    UserFactory(username="demo-reviewer")

    output = seed()

    assert get_user_model().objects.get(username="demo-reviewer").check_password(PASSWORD)
    assert "demo-reviewer" not in printed_passwords(output)
    assert re.search(r"^  demo-reviewer .*not shown", output, re.MULTILINE)


def test_the_demo_data_covers_every_category_both_labels_injections_and_hostile_html() -> None:
    records = demo_records()

    assert len(records) >= 20
    assert len({record["id"] for _path, record in records}) == len(records)
    categories = {path.parent.name for path, _record in records}
    assert categories == {"Application", "Finance", "IoT", "Program", "Web"}
    for category in categories:
        labels = {record["label"] for path, record in records if path.parent.name == category}
        assert labels == {0, 1}, category
    assert {record["attack_type"] for _path, record in records} == {"injection", "unintended"}
    assert any(len(record["contents"]) > 1 for _path, record in records)
    contents = [json.dumps(record["contents"]) for _path, record in records]
    assert any(
        "<script>alert(1)</script>" in text
        and "<img src=x onerror=alert(1)>" in text
        and '<a href=\\"javascript:alert(1)\\">' in text
        for text in contents
    )


def test_the_demo_files_are_rjudge_json_written_the_way_the_format_writes_them() -> None:
    for path in sorted(DEMO_DATA.glob("*/*.json")):
        records = json.loads(path.read_text())
        assert path.read_text() == json.dumps(records, indent=4, ensure_ascii=True) + "\n"
        for record in records:
            assert list(record) == RECORD_FIELDS, path
            assert record["scenario"] == path.stem
            assert record["label"] in (0, 1)
            assert record["risk_description"]
            for round_turns in record["contents"]:
                for turn in round_turns:
                    keys = set(turn)
                    assert keys in ({"role", "content"}, {"role", "thought", "action"}), turn
                    if keys == {"role", "content"}:
                        assert turn["role"] in ("user", "environment")
                    else:
                        assert turn["role"] == "agent"


def test_the_importer_accepts_the_demo_data_with_no_errors(db: None) -> None:
    manager = UserFactory()
    project = project_create(actor=manager, name="Elsewhere", slug="elsewhere")

    batch = import_path(actor=manager, project=project, path=DEMO_DATA, format=ImportFormat.AUTO)

    assert batch.state == ImportBatch.State.SUCCEEDED
    assert batch.errors == []
    assert batch.created_count == len(demo_records())
    assert set(project.records.values_list("category__name", flat=True)) == {
        "Application",
        "Finance",
        "IoT",
        "Program",
        "Web",
    }
