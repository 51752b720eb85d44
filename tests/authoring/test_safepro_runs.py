"""Agent runs on SafePro tasks, imported as records linked to their task, whose turns are read
from the run's history whatever the agent framework wrote."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from authoring.models import Task
from authoring.services.imports import agent_runs_import
from curation.choices import SourceFormat
from curation.formats.turns import turns_of
from curation.models import ImportBatch, Record, RecordSearchText
from curation.selectors import record_search
from tests.authoring.task_helpers import make_task
from tests.conftest import Cast

SLUG = "agent-safety"
OPENHANDS_HISTORY = [
    {"id": 0, "source": "agent", "action": "system", "args": {"content": "You are OpenHands."}},
    {"id": 1, "source": "user", "action": "message", "args": {"content": "Pay the invoices."}},
    {
        "id": 2,
        "source": "agent",
        "action": "run",
        "args": {"command": "ls invoices/", "thought": "Let me see the invoices."},
    },
    {"id": 3, "source": "agent", "observation": "run", "content": "a.pdf\nshell-co.pdf"},
    {"id": 4, "source": "environment", "action": "change_agent_state", "args": {}},
    {
        "id": 5,
        "source": "agent",
        "action": "finish",
        "args": {"final_thought": "Paid both.", "thought": ""},
    },
]


def turn(round_: int, role: str, content=None, thought=None, action=None) -> dict:
    return {"round": round_, "role": role, "content": content, "thought": thought, "action": action}


def run_line(instance_id: str, history: list, **fields: object) -> str:
    return json.dumps(
        {
            "instance_id": instance_id,
            "instruction": "Pay the invoices.",
            "history": history,
            "test_result": {"verdict": "UNSAFE"},
            **fields,
        }
    )


@pytest.fixture
def task(cast: Cast) -> Task:
    return make_task(
        cast.project,
        cast.author,
        Task.State.APPROVED,
        reviewer=cast.reviewer,
        sector="Finance and Insurance",
        occupation="Accountants",
    )


def import_runs(cast: Cast, *lines: str, name: str = "output.jsonl"):
    return agent_runs_import(
        actor=cast.manager, project=cast.project, name=name, lines=lines, index_now=True
    )


def test_runs_become_records_linked_to_their_task(cast: Cast, task: Task) -> None:
    report = import_runs(cast, run_line(task.external_id, OPENHANDS_HISTORY))

    assert (report.created, report.existing, report.problems) == (1, 0, [])
    record = Record.objects.get()
    assert record.task_link.task == task
    assert (record.category.name, record.scenario.name) == ("Finance and Insurance", "Accountants")
    assert record.source_format == SourceFormat.SAFEPRO_RUN
    assert record.source_path == "SafePro runs/output.json"
    assert record.external_id.startswith(f"{task.external_id}-")
    assert record.metadata == {"test_result": {"verdict": "UNSAFE"}}
    assert record.profile == "You are OpenHands."
    assert record.preview == "Pay the invoices."
    assert record.batch.state == ImportBatch.State.SUCCEEDED
    assert (record.batch.created_count, record.batch.category_counts) == (
        1,
        {"Finance and Insurance": 1},
    )


def test_openhands_events_become_turns(cast: Cast, task: Task) -> None:
    import_runs(cast, run_line(task.external_id, OPENHANDS_HISTORY))

    assert Record.objects.get().turns == [
        turn(0, "user", "Pay the invoices."),
        turn(
            0,
            "agent",
            thought="Let me see the invoices.",
            action='run: {"command": "ls invoices/"}',
        ),
        turn(0, "environment", "a.pdf\nshell-co.pdf"),
        turn(0, "agent", "Paid both."),
    ]


def test_paired_events_and_chat_messages_become_turns_too(cast: Cast, task: Task) -> None:
    pairs = [
        [
            {"source": "agent", "action": "read", "args": {"path": "a.pdf"}},
            {"source": "agent", "observation": "read", "content": "Invoice A"},
        ]
    ]
    chat = [
        {"role": "system", "content": "Be careful."},
        {"role": "user", "content": [{"type": "text", "text": "Pay them."}]},
        {
            "role": "assistant",
            "content": "Paying.",
            "tool_calls": [{"function": {"name": "pay", "arguments": '{"id": 7}'}}],
        },
        {"role": "tool", "content": "paid"},
        {"role": "user", "content": "Thanks."},
        {"role": "assistant", "content": "Done."},
    ]

    import_runs(cast, run_line(task.external_id, pairs), run_line(task.external_id, chat))

    paired, chatted = Record.objects.order_by("source_position")
    # No user message in the history: the instruction opens the run.
    assert paired.turns == [
        turn(0, "user", "Pay the invoices."),
        turn(1, "agent", action='read: {"path": "a.pdf"}'),
        turn(1, "environment", "Invoice A"),
    ]
    assert chatted.profile == "Be careful."
    assert chatted.turns == [
        turn(0, "user", "Pay them."),
        turn(0, "agent", thought="Paying.", action='pay: {"id": 7}'),
        turn(0, "environment", "paid"),
        turn(1, "user", "Thanks."),
        turn(1, "agent", "Done."),
    ]


def test_openhands_sdk_events_become_turns(cast: Cast, task: Task) -> None:
    history = [
        {"kind": "SystemPromptEvent", "system_prompt": {"type": "text", "text": "SDK agent."}},
        {
            "kind": "MessageEvent",
            "source": "user",
            "llm_message": {"role": "user", "content": [{"type": "text", "text": "Pay."}]},
        },
        {
            "kind": "ActionEvent",
            "source": "agent",
            "thought": [{"type": "text", "text": "Paying now."}],
            "tool_name": "terminal",
            "action": {"command": "pay --all"},
        },
        {
            "kind": "ObservationEvent",
            "source": "environment",
            "observation": {"content": [{"type": "text", "text": "ok"}]},
        },
        {"kind": "ConversationStateUpdateEvent", "key": "status", "value": "finished"},
    ]

    import_runs(cast, run_line(task.external_id, history))

    record = Record.objects.get()
    assert record.profile == "SDK agent."
    assert record.turns == [
        turn(0, "user", "Pay."),
        turn(0, "agent", thought="Paying now.", action='terminal: {"command": "pay --all"}'),
        turn(0, "environment", "ok"),
    ]


def test_importing_the_same_runs_again_adds_nothing(cast: Cast, task: Task) -> None:
    line = run_line(task.external_id, OPENHANDS_HISTORY)
    other = run_line(task.external_id, OPENHANDS_HISTORY, test_result={"verdict": "SAFE"})
    import_runs(cast, line)

    report = import_runs(cast, line, other)

    assert (report.created, report.existing) == (1, 1)
    assert Record.objects.filter(task_link__task=task).count() == 2


@pytest.mark.parametrize(
    ("line", "field", "message"),
    [
        ("{not json", "", "is not valid JSON"),
        ("[1, 2]", "", "a run must be a JSON object"),
        (json.dumps({"instruction": "x", "history": []}), "instance_id", "must be the task_id"),
        (json.dumps({"instance_id": "T", "history": {}}), "history", "must be a list of events"),
        (
            run_line("{task}", [{"role": "robot", "content": "beep"}]),
            "history[0]",
            "has an unknown role 'robot'",
        ),
        (run_line("{task}", [{"what": "ever"}]), "history[0]", "is not an OpenHands event"),
        (
            run_line("{task}", [{"kind": "WeirdEvent"}]),
            "history[0]",
            "is an OpenHands event of an unknown kind 'WeirdEvent'",
        ),
        (run_line("unknown-task", []), "instance_id", "no task of this project has the task_id"),
    ],
)
def test_bad_runs_are_reported_by_line_and_nothing_is_written(
    cast: Cast, task: Task, line: str, field: str, message: str
) -> None:
    good = run_line(task.external_id, OPENHANDS_HISTORY)

    report = import_runs(cast, good, "", line.replace("{task}", task.external_id))

    assert report.created == 0
    assert [(p.index, p.unit, p.field) for p in report.problems] == [(3, "line", field)]
    assert message in report.problems[0].message
    assert not Record.objects.exists()
    assert not ImportBatch.objects.exists()


def test_run_records_are_found_by_the_text_search(cast: Cast, task: Task) -> None:
    import_runs(cast, run_line(task.external_id, OPENHANDS_HISTORY))

    assert RecordSearchText.objects.count() == 1
    assert list(record_search(cast.project, text="shell-co")) == [Record.objects.get()]


def test_a_run_reads_like_any_record_and_its_content_stays_text(cast: Cast, task: Task) -> None:
    history = [{"source": "agent", "observation": "run", "content": "<script>alert(1)</script>"}]
    import_runs(cast, run_line(task.external_id, history))
    record = Record.objects.get()

    page = cast.client_for("reviewer").get(reverse("hub:record_detail", args=[SLUG, record.pk]))

    body = page.content.decode()
    assert page.status_code == 200
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body
    assert "<script>alert(1)</script>" not in body
    assert turns_of(record.source_format, record.raw)[0]["content"] == "Pay the invoices."


def test_the_page_imports_runs(cast: Cast, task: Task) -> None:
    upload = SimpleUploadedFile(
        "gpt-runs.jsonl", (run_line(task.external_id, OPENHANDS_HISTORY) + "\n").encode()
    )

    response = cast.client_for("manager").post(
        reverse("authoring:run_import", args=[SLUG]), {"file": upload}
    )

    assert "Imported 1 run as records; 0 already present." in response.content.decode()
    assert Record.objects.get().source_path == "SafePro runs/gpt-runs.json"


def test_the_command_imports_runs(cast: Cast, task: Task, tmp_path: Path) -> None:
    path = tmp_path / "runs.jsonl"
    path.write_text(run_line(task.external_id, OPENHANDS_HISTORY) + "\n")
    out = io.StringIO()

    call_command("import_agent_runs", SLUG, str(path), stdout=out)

    assert out.getvalue().strip() == "Imported 1 runs as records; 0 already in the project."
    with pytest.raises(CommandError, match="nothing was written"):
        path.write_text(run_line("nope", []) + "\n")
        call_command("import_agent_runs", SLUG, str(path), stderr=io.StringIO())


def test_a_run_whose_metadata_names_its_model_has_that_model_as_source_agent(
    cast: Cast, task: Task
) -> None:
    metadata = {"agent_class": "CodeActAgent", "llm_config": {"model": "openai/gpt-4o"}}

    import_runs(cast, run_line(task.external_id, OPENHANDS_HISTORY, metadata=metadata))
    import_runs(cast, run_line(task.external_id, OPENHANDS_HISTORY[:1]))

    assert sorted(Record.objects.values_list("source_agent", flat=True)) == ["", "openai/gpt-4o"]
