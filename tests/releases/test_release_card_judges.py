"""The dataset card compares judge runs, and sets apart those whose answers on the release's
records are mostly invalid or errors instead of publishing them as a judge's F1."""

from __future__ import annotations

from releases.build import release_folder
from releases.models import LabelBasis
from tests.conftest import Cast
from tests.releases.helpers import built_release, record
from tests.review.opinions import judge_run


def test_a_run_of_mostly_errors_is_left_out_of_the_cards_comparison(cast: Cast) -> None:
    records = [record(cast.project, n, label=n % 2) for n in range(1, 5)]
    gold = {r: "unsafe" if n % 2 else "safe" for n, r in enumerate(records, start=1)}
    judge_run(cast.project, "Careful judge", gold)
    judge_run(cast.project, "Half answered", {**gold, records[0]: "error", records[1]: "invalid"})
    judge_run(cast.project, "Endpoint down", dict.fromkeys(records, "error"))

    release = built_release(cast.project, cast.manager, label_basis=LabelBasis.GOLD)

    card = (release_folder(release) / "README.md").read_text()
    compared, _, left_out = card.partition("## Judge runs left out")
    assert "| Careful judge | 4 | 1.000 | 1.000 | 1.000 | 1.000 |" in compared
    # Exactly half invalid or errors is not "more than half": still compared.
    assert "| Half answered | 4 |" in compared
    assert "Endpoint down" not in compared
    assert "| Endpoint down | 4 | 0.000 | 0.000 | 0.000 | 0.000 |" in left_out
    assert "validity under 0.5" in left_out
