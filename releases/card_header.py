"""The YAML header of a release's dataset card: what the Hugging Face Hub and `datasets` read.

A release folder pushed as it is to the Hub loads with `datasets.load_dataset(<folder or repo>,
<config>)`, one config per table of the release, `default` being the records. The license is
given as the Hub names licenses where the release's license is one of them, else as `other`
with its name.
"""

from __future__ import annotations

import re

from releases.models import Release
from releases.pairs import DPO_JSONL
from releases.pipeline_files import (
    JUDGE_DATASET,
    JUDGE_SFT,
    JUDGE_SFT_OPENAI,
    JUDGE_TASK,
    PIPELINE_LAYOUT,
    TOOLEMU_CASES,
)
from releases.record_files import RECORDS_JSONL, RECORDS_PARQUET
from releases.trl_file import TRL_JSONL

# File -> its config, in the order the card lists them. `datasets` reads every config of a
# folder with the builder of the first one's files, so every config is a JSON Lines file: the
# records as records.jsonl (records.parquet holds the same rows, labels.csv some of their
# columns); the zips and safepro.json are no tables.
CONFIGS = {
    RECORDS_JSONL: "default",
    DPO_JSONL: "dpo_pairs",
    TRL_JSONL: "dpo_pairs_conversational",
    JUDGE_DATASET: "judge_dataset",
    JUDGE_SFT: "judge_sft",
    JUDGE_SFT_OPENAI: "judge_sft_openai",
    TOOLEMU_CASES: "toolemu_cases",
}
# The Hub's identifiers of the licenses datasets are most often published under.
HUB_LICENSES = frozenset(
    {
        "apache-2.0",
        "mit",
        "bsd-2-clause",
        "bsd-3-clause",
        "gpl-3.0",
        "lgpl-3.0",
        "agpl-3.0",
        "mpl-2.0",
        "cc0-1.0",
        "cc-by-3.0",
        "cc-by-4.0",
        "cc-by-sa-3.0",
        "cc-by-sa-4.0",
        "cc-by-nc-3.0",
        "cc-by-nc-4.0",
        "cc-by-nd-4.0",
        "cc-by-nc-nd-4.0",
        "cc-by-nc-sa-3.0",
        "cc-by-nc-sa-4.0",
        "odc-by",
        "odbl",
        "pddl",
        "cdla-permissive-2.0",
        "cdla-sharing-1.0",
        "unlicense",
        "unknown",
    }
)
# The Hub's size categories: (records below, category).
SIZES = (
    (1_000, "n<1K"),
    (10_000, "1K<n<10K"),
    (100_000, "10K<n<100K"),
    (1_000_000, "100K<n<1M"),
    (10_000_000, "1M<n<10M"),
)
_NOT_IN_A_NAME = re.compile(r"[^a-z0-9.]+")


def card_header(release: Release, files: list[str], pretty_name: str) -> list[str]:
    """The lines between the card's two `---`, for a release of the release's layout."""
    license = yaml_text(release.license)
    lines = [f"license: {license}", f"pretty_name: {yaml_text(pretty_name)}"]
    if release.layout < PIPELINE_LAYOUT:
        return [*lines, "configs:", "- config_name: default", f"  data_files: {RECORDS_PARQUET}"]
    hub_license = hub_license_name(release.license)
    if hub_license in HUB_LICENSES:
        lines = [f"license: {hub_license}", *lines[1:]]
    else:
        lines = ["license: other", f"license_name: {yaml_text(hub_license)}", *lines[1:]]
    lines += [
        "task_categories:",
        "- text-classification",
        "tags:",
        "- agent-safety",
        "- safety-judgment",
        "size_categories:",
        f"- {size_category(release.summary.get('records', 0))}",
        "configs:",
    ]
    for name, config in CONFIGS.items():
        if name in files:
            lines += [f"- config_name: {config}", f"  data_files: {name}"]
    return lines


def usage_lines(release: Release, files: list[str]) -> list[str]:
    """How to load the release's tables and run its evaluation, for releases that have them."""
    if release.layout < PIPELINE_LAYOUT:
        return []
    configs = [config for name, config in CONFIGS.items() if name in files]
    lines = [
        "## Using this release",
        "",
        "Each table is a config of `datasets.load_dataset(<this folder or repository>, "
        "<config>)`: " + ", ".join(f"`{config}`" for config in configs) + ".",
        "",
    ]
    if JUDGE_TASK in files:
        lines += [
            "`judge_task.py` measures a model as a safety judge of the labelled records with "
            "R-Judge's two steps (an analysis, then safe or unsafe) and R-Judge's metrics (F1, "
            "recall, specificity, validity): `inspect eval judge_task.py --model <model>`. "
            "`judge_sft.jsonl` (TRL's conversational format) and `judge_sft_openai.jsonl` "
            "(OpenAI's fine-tuning format) teach a judge the same two steps.",
            "",
        ]
    return lines


def hub_license_name(license: str) -> str:
    """The license as the Hub spells its identifiers: "CC BY-NC-SA 4.0" is cc-by-nc-sa-4.0."""
    return _NOT_IN_A_NAME.sub("-", license.lower()).strip("-.") or "unknown"


def size_category(records: int) -> str:
    return next((category for below, category in SIZES if records < below), "n>10M")


def yaml_text(text: str) -> str:
    # A double-quoted YAML scalar: whatever the text says, it stays one value.
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")
    return f'"{escaped}"'
