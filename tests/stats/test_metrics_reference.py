"""The metric functions agree with reference implementations on random data."""

from __future__ import annotations

import krippendorff
import numpy as np
import pytest
from scipy.stats import spearmanr
from sklearn.metrics import cohen_kappa_score, f1_score, recall_score
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as statsmodels_fleiss_kappa

from stats import metrics

SEEDS = range(10)


def ratings_with_gaps(rng: np.random.Generator, items: int, raters: int, categories: int):
    """A raters-by-items matrix of codes, some missing (NaN), every item rated at least once."""
    truth = rng.integers(0, categories, items)
    noise = rng.integers(0, categories, (raters, items))
    data = np.where(rng.random((raters, items)) < 0.7, truth, noise).astype(float)
    data[rng.random(data.shape) < 0.3] = np.nan
    data[0, np.isnan(data).all(axis=0)] = 0
    return data


def counts_of(data: np.ndarray, categories: int) -> np.ndarray:
    items = np.broadcast_to(np.arange(data.shape[1]), data.shape)
    rated = ~np.isnan(data)
    return metrics.category_counts(items[rated], data[rated].astype(int), data.shape[1], categories)


def wrong_when_invalid(reference: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    """R-Judge's rule: an invalid answer is the wrong one."""
    return np.where(predicted == metrics.INVALID, 1 - reference, predicted)


@pytest.mark.parametrize("seed", SEEDS)
def test_cohens_kappa_agrees_with_scikit_learn(seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, 300)
    b = np.where(rng.random(300) < 0.6, a, rng.integers(0, 3, 300))

    ours = metrics.cohen_kappa(metrics.contingency(a, b, 3, 3))

    assert ours == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_f1_and_recall_with_invalid_answers_agree_with_scikit_learn(seed: int) -> None:
    rng = np.random.default_rng(seed)
    reference = rng.integers(0, 2, 400)
    predicted = np.where(rng.random(400) < 0.7, reference, rng.integers(0, 3, 400))

    scores = metrics.judge_scores(metrics.judge_confusion(reference, predicted))

    answered = wrong_when_invalid(reference, predicted)
    assert scores["f1"] == pytest.approx(f1_score(reference, answered), abs=1e-12)
    assert scores["recall"] == pytest.approx(recall_score(reference, answered), abs=1e-12)
    specificity = recall_score(reference, answered, pos_label=0)
    assert scores["specificity"] == pytest.approx(specificity, abs=1e-12)
    assert scores["validity"] == pytest.approx(np.mean(predicted != metrics.INVALID))


@pytest.mark.parametrize("seed", SEEDS)
def test_fleiss_kappa_agrees_with_statsmodels(seed: int) -> None:
    rng = np.random.default_rng(seed)
    raters = rng.integers(2, 6)
    ratings = np.where(
        rng.random((150, raters)) < 0.5,
        rng.integers(0, 3, (150, 1)),
        rng.integers(0, 3, (150, raters)),
    )
    table, _ = aggregate_raters(ratings, n_cat=3)

    assert metrics.fleiss_kappa(table) == pytest.approx(statsmodels_fleiss_kappa(table), abs=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("level", ["nominal", "ordinal"])
def test_krippendorffs_alpha_agrees_with_the_krippendorff_package(seed: int, level: str) -> None:
    rng = np.random.default_rng(seed)
    data = ratings_with_gaps(rng, items=120, raters=4, categories=4)

    ours = metrics.krippendorff_alpha(counts_of(data, 4), level=level)

    theirs = krippendorff.alpha(
        reliability_data=data, level_of_measurement=level, value_domain=[0, 1, 2, 3]
    )
    assert ours == pytest.approx(theirs, abs=1e-9)


def gwet_ac1_by_the_book(data: np.ndarray, categories: int) -> float:
    """Gwet (2014), eq. for multiple raters with missing ratings, one item at a time."""
    pa_terms, pi = [], np.zeros(categories)
    rated_items = 0
    for item in data.T:
        codes = item[~np.isnan(item)].astype(int)
        r = len(codes)
        counts = np.bincount(codes, minlength=categories)
        if r >= 1:
            rated_items += 1
            pi += counts / r
        if r >= 2:
            pa_terms.append((counts * (counts - 1)).sum() / (r * (r - 1)))
    pa = np.mean(pa_terms)
    pi /= rated_items
    pe = (pi * (1 - pi)).sum() / (categories - 1)
    return (pa - pe) / (1 - pe)


@pytest.mark.parametrize("seed", SEEDS)
def test_gwets_ac1_agrees_with_the_formula_applied_item_by_item(seed: int) -> None:
    rng = np.random.default_rng(seed)
    data = ratings_with_gaps(rng, items=100, raters=5, categories=3)

    ours = metrics.gwet_ac1(counts_of(data, 3), categories=3)

    assert ours == pytest.approx(gwet_ac1_by_the_book(data, 3), abs=1e-12)


def test_gwets_ac1_stays_high_where_kappa_collapses_on_a_dominant_label() -> None:
    # Gwet's paradox: 118 both "safe", 5 and 2 split, none both "unsafe".
    table = np.array([[118, 5], [2, 0]])
    first = np.repeat([0, 0, 1, 1], table.ravel())
    second = np.repeat([0, 1, 0, 1], table.ravel())
    counts = metrics.category_counts(
        np.r_[np.arange(125), np.arange(125)], np.r_[first, second], 125, 2
    )

    assert metrics.cohen_kappa(table) == pytest.approx(-0.0234, abs=1e-4)
    assert metrics.gwet_ac1(counts) == pytest.approx(0.9408, abs=1e-4)


@pytest.mark.parametrize("seed", SEEDS)
def test_two_raters_agree_in_pairs_as_in_their_contingency_table(seed: int) -> None:
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, 3, 200), rng.integers(0, 3, 200)
    counts = metrics.category_counts(np.r_[np.arange(200), np.arange(200)], np.r_[a, b], 200, 3)

    table = metrics.contingency(a, b, 3, 3)
    assert metrics.percent_agreement(counts) == pytest.approx(np.mean(a == b))
    assert metrics.percent_agreement_of_pairs(table) == pytest.approx(np.mean(a == b))


def test_statistics_of_item_patterns_equal_those_of_the_items() -> None:
    rng = np.random.default_rng(7)
    counts = rng.multinomial(3, [0.5, 0.4, 0.1], size=5000)

    shapes, frequency = metrics.patterns(counts)

    assert len(shapes) <= 10
    for statistic in (metrics.fleiss_kappa, metrics.gwet_ac1, metrics.krippendorff_alpha):
        assert statistic(shapes, frequency) == pytest.approx(statistic(counts), abs=1e-12)


def test_the_bootstrap_matches_resampling_the_items_one_by_one() -> None:
    rng = np.random.default_rng(3)
    a = rng.integers(0, 2, 400)
    b = np.where(rng.random(400) < 0.8, a, 1 - a)
    table = metrics.contingency(a, b, 2, 2)

    ours = metrics.estimate(table, metrics.cohen_kappa, resamples=4000)

    picks = rng.integers(0, 400, (4000, 400))
    naive = [cohen_kappa_score(a[p], b[p]) for p in picks[:400]]
    low, high = np.percentile(naive, [2.5, 97.5])
    assert ours.low == pytest.approx(low, abs=0.03)
    assert ours.high == pytest.approx(high, abs=0.03)
    assert ours.low < ours.value < ours.high


def test_the_bootstrap_is_the_same_on_every_call_and_takes_its_number_of_resamples() -> None:
    table = np.array([[40, 10], [5, 45]])

    first = metrics.estimate(table, metrics.cohen_kappa)
    again = metrics.estimate(table, metrics.cohen_kappa)
    fewer = metrics.estimate(table, metrics.cohen_kappa, resamples=50)

    assert first == again
    assert fewer != first
    assert metrics.estimate(table, metrics.cohen_kappa, resamples=0).has_interval is False


def test_the_consensus_needs_a_strict_majority_of_at_least_k_labels() -> None:
    counts = np.array(
        [
            [2, 0, 0],  # two safe
            [1, 1, 0],  # split
            [0, 2, 1],  # unsafe wins over unsure
            [0, 1, 2],  # unsure never wins
            [0, 1, 0],  # one label only
        ]
    )

    codes = metrics.majority(counts, minimum=2, abstain=metrics.UNSURE)

    assert codes.tolist() == [0, -1, 1, -1, -1]


@pytest.mark.parametrize("seed", SEEDS)
def test_two_raters_score_statistics_agree_with_the_reference_libraries(seed: int) -> None:
    rng = np.random.default_rng(seed)
    # Some seeds leave scores unused: the kappa still weighs steps on the whole 0-3 scale.
    top = rng.integers(2, 5)
    a = rng.integers(0, top, 200)
    b = np.where(rng.random(200) < 0.5, a, rng.integers(0, top, 200))

    statistics = metrics.score_agreement(metrics.contingency(a, b, 4, 4))

    assert statistics["kappa"] == pytest.approx(
        cohen_kappa_score(a, b, weights="quadratic", labels=[0, 1, 2, 3]), abs=1e-12
    )
    reliability = np.vstack([a, b]).astype(float)
    assert statistics["alpha"] == pytest.approx(
        krippendorff.alpha(reliability_data=reliability, level_of_measurement="ordinal"),
        abs=1e-12,
    )
    assert statistics["spearman"] == pytest.approx(spearmanr(a, b).statistic, abs=1e-12)
    assert statistics["mae"] == pytest.approx(np.abs(a - b).mean(), abs=1e-12)
    assert statistics["exact"] == pytest.approx(np.mean(a == b), abs=1e-12)


def test_score_kappa_weighs_steps_on_the_whole_scale_not_only_the_scores_used() -> None:
    # Nobody gives a 2: on the 0-3 scale a 1 and a 3 are still two steps apart, not one.
    a = np.array([0, 1, 3, 3, 0, 1, 3])
    b = np.array([1, 1, 3, 0, 0, 3, 3])

    kappa = metrics.score_agreement(metrics.contingency(a, b, 4, 4))["kappa"]

    assert kappa == pytest.approx(
        cohen_kappa_score(a, b, weights="quadratic", labels=[0, 1, 2, 3]), abs=1e-12
    )
    assert kappa != pytest.approx(cohen_kappa_score(a, b, weights="quadratic"), abs=1e-6)
