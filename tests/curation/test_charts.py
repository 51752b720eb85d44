"""Charts drawn on the server: bars scale to their values and labels are escaped."""

from __future__ import annotations

from django.template.loader import render_to_string

from curation.charts import bar_chart, column_chart, heatmap


def test_bars_are_as_long_as_their_share_of_the_largest_value() -> None:
    chart = bar_chart("Labels", [("alice", 30), ("bob", 15), ("carol", 0)])

    widths = [bar.width for bar in chart.bars]
    assert widths[0] == chart.plot_width
    assert widths[1] == chart.plot_width / 2
    assert widths[2] == 0
    assert [bar.text for bar in chart.bars] == ["30", "15", "0"]


def test_intervals_are_placed_on_the_same_scale_as_the_bars() -> None:
    chart = bar_chart("Kappa", [("a", 0.5)], maximum=1.0, intervals=[(0.25, 0.75)])

    bar = chart.bars[0]
    assert bar.low_x == chart.label_width + chart.plot_width / 4
    assert bar.high_x == chart.label_width + chart.plot_width * 3 / 4


def test_columns_rise_with_their_values_and_label_only_some_when_many() -> None:
    chart = column_chart("Per day", [(f"d{i}", i) for i in range(30)])

    heights = [column.height for column in chart.columns]
    assert heights == sorted(heights)
    assert sum(column.show_label for column in chart.columns) <= 12


def test_a_heatmap_shades_cells_by_value() -> None:
    chart = heatmap("Confusion", ["unsafe", "safe"], ["unsafe", "safe"], [[40, 10], [0, 50]])

    assert [cell.shade for cell in chart.cells] == [3, 1, 0, 4]


def test_labels_are_escaped_in_the_svg_and_the_table() -> None:
    chart = bar_chart("Annotators", [("<script>alert(1)</script>", 3)])

    html = render_to_string("charts/bar.html", {"chart": chart})

    assert "<script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
