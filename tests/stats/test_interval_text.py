"""How an interval is printed, on every page and in the dataset card."""

from __future__ import annotations

import math

from stats.metrics import Estimate, interval_text


def test_a_range_of_negative_numbers_reads_unambiguously() -> None:
    assert interval_text(-0.6667, -0.5) == "-0.67 to -0.50"
    assert Estimate(-0.6, -0.8, 0.25).interval_text == "-0.80 to 0.25"


def test_an_interval_whose_bounds_print_alike_is_not_printed() -> None:
    assert interval_text(-0.667, -0.667) == ""
    assert interval_text(0.9999, 1.0) == ""
    assert Estimate(1.0, 1.0, 1.0).interval_text == ""


def test_no_interval_prints_nothing_and_a_rounded_zero_has_no_sign() -> None:
    assert interval_text(math.nan, math.nan) == ""
    assert interval_text(None, None) == ""
    assert interval_text(-0.001, 0.5) == "0.00 to 0.50"
    assert interval_text(0.1234, 0.5678, digits=3) == "0.123 to 0.568"
