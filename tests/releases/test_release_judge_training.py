"""A release teaches judges: its labelled records as supervised conversations in R-Judge's two
steps, in TRL's conversational format (checked by TRL's own code, loaded by `datasets`) and in
OpenAI's fine-tuning format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from judging.protocols.rjudge import ANALYSE, DECIDE
from releases.build import release_folder
from releases.models import Release
from review.services.adjudications import adjudication_create
from tests.conftest import Cast
from tests.releases.helpers import annotators, built_release, label, record

pytestmark = pytest.mark.django_db

CHAT_TEMPLATE = (
    "{% for message in messages %}<|{{ message['role'] }}|>\n{{ message['content'] }}\n{% endfor %}"
)


@pytest.fixture
def release(cast: Cast) -> Release:
    """Four records: adjudicated unsafe, consensus unsafe with a description, consensus safe
    (which keeps none), and one without a consensus."""
    project = cast.project
    project.overlap = 2
    project.save()
    first, second = annotators(project, 2)
    settled, unsafe, safe, split = (record(project, n) for n in range(1, 5))
    for person in (first, second):
        label(settled, person, "safe")
        label(unsafe, person, "unsafe", risk_description="It deletes the user's mail unasked.")
        label(safe, person, "safe")
    label(split, first, "safe")
    label(split, second, "unsafe", risk_description="Maybe.")
    adjudication_create(
        actor=cast.reviewer,
        project=project,
        record=settled,
        label="unsafe",
        reason="The mails were the user's only copy.",
        risk_description="Deleting 214 mails without asking loses the user's data.",
    )
    return built_release(project, cast.manager)


def lines(release: Release, name: str) -> list[dict[str, Any]]:
    text = (release_folder(release) / name).read_text()
    return [json.loads(line) for line in text.splitlines()]


def test_each_labelled_record_is_a_conversation_of_rjudges_two_steps(release: Release) -> None:
    examples = {example["id"]: example for example in lines(release, "judge_sft.jsonl")}

    assert sorted(examples) == ["1", "2", "3"]
    settled = examples["1"]
    system, record_turn, analysis, question, answer = settled["messages"]
    assert system == {"role": "system", "content": "You are a mail assistant."}
    assert record_turn["role"] == "user"
    assert record_turn["content"].startswith("[USER]: Please tidy up my inbox.")
    assert "[Thought]: I should delete the old mails." in record_turn["content"]
    assert "[ENVIRONMENT]: Deleted 214 emails." in record_turn["content"]
    assert record_turn["content"].endswith(ANALYSE)
    assert analysis == {
        "role": "assistant",
        "content": "Deleting 214 mails without asking loses the user's data.",
    }
    assert question == {"role": "user", "content": DECIDE}
    assert answer == {"role": "assistant", "content": "unsafe"}
    assert (settled["adjudicated"], settled["label_source"], settled["described"]) == (
        True,
        "adjudicated",
        True,
    )
    assert examples["2"]["messages"][2]["content"] == "It deletes the user's mail unasked."
    assert (examples["2"]["adjudicated"], examples["2"]["safety_label"]) == (False, "unsafe")
    # A safe consensus keeps no description: the analysis says the label, and says so.
    assert examples["3"]["messages"][-1]["content"] == "safe"
    assert examples["3"]["described"] is False
    assert examples["3"]["messages"][2]["content"].startswith("The agent's actions")


def test_the_openai_file_holds_the_same_conversations_and_nothing_else(release: Release) -> None:
    trl = lines(release, "judge_sft.jsonl")
    openai = lines(release, "judge_sft_openai.jsonl")

    assert openai == [{"messages": example["messages"]} for example in trl]
    for example in openai:
        roles = [message["role"] for message in example["messages"]]
        assert roles == ["system", "user", "assistant", "user", "assistant"]
        assert all(set(message) == {"role", "content"} for message in example["messages"])
        assert all(message["content"].strip() for message in example["messages"])


def test_trl_reads_the_file_as_its_conversational_format(
    release: Release, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    import datasets
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from transformers import PreTrainedTokenizerFast
    from trl.data_utils import apply_chat_template, is_conversational, maybe_apply_chat_template

    loaded = datasets.load_dataset(
        "json",
        data_files=str(release_folder(release) / "judge_sft.jsonl"),
        split="train",
        cache_dir=str(tmp_path / "cache"),
    )
    # A tokenizer made here, with a chat template of its own: no model is downloaded.
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=Tokenizer(WordLevel({"[UNK]": 0}, unk_token="[UNK]")),
        chat_template=CHAT_TEMPLATE,
    )

    assert loaded.num_rows == 3
    for example in loaded:
        assert is_conversational(example)
        text = apply_chat_template(example, tokenizer)["text"]
        assert text == maybe_apply_chat_template(example, tokenizer)["text"]
        assert text.startswith("<|system|>\n")
        assert text.endswith(f"<|user|>\n{DECIDE}\n<|assistant|>\n{example['safety_label']}\n")
