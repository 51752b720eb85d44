"""Charts drawn on the server: bars scale to their values and labels are escaped."""

from __future__ import annotations

import math

from django.template.loader import render_to_string

from curation import charts
from curation.charts import bar_chart, column_chart, heatmap, hours


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
    chart = heatmap(
        "Confusion",
        ["unsafe", "safe"],
        ["unsafe", "safe"],
        [[40, 10], [0, 50]],
        row_title="Reference",
        column_title="Judge",
    )

    assert [cell.shade for cell in chart.cells] == [3, 1, 0, 4]


def test_a_heatmap_names_its_axes_in_the_drawing_to_screen_readers_and_in_its_table() -> None:
    chart = heatmap(
        "Confusion",
        ["safe", "unsafe"],
        ["safe", "unsafe", "invalid"],
        [[40, 10, 1], [0, 50, 2]],
        row_title="Reference <gold>",
        column_title="Answer of judge-a",
    )

    html = render_to_string("charts/heatmap.html", {"chart": chart})

    assert 'heatmap-row-title"' in html
    assert ">Reference &lt;gold&gt;</text>" in html
    assert ">Answer of judge-a</text>" in html
    axes = "Rows: Reference &lt;gold&gt;. Columns: Answer of judge-a."
    assert f'aria-label="Confusion. {axes}"' in html
    assert f"<caption>{axes}</caption>" in html
    assert '<th scope="colgroup" colspan="3">Answer of judge-a</th>' in html
    assert '<th scope="col">Reference &lt;gold&gt;</th>' in html


def test_labels_are_escaped_in_the_svg_and_the_table() -> None:
    chart = bar_chart("Annotators", [("<script>alert(1)</script>", 3)])

    html = render_to_string("charts/bar.html", {"chart": chart})

    assert "<script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_a_negative_value_is_a_bar_left_of_the_zero_line() -> None:
    chart = bar_chart(
        "Cohen's kappa",
        [("ann & bob", 0.5), ("ann & cy", -0.342)],
        maximum=1.0,
        number_format="{:.3f}",
    )

    positive, negative = chart.bars
    assert chart.has_negative and chart.zero_x > chart.label_width
    assert positive.x == chart.zero_x and positive.width > 0
    assert negative.x < chart.zero_x and negative.x + negative.width == chart.zero_x
    html = render_to_string("charts/bar.html", {"chart": chart})
    assert ">-0.342<" in html
    assert 'class="chart-bar series-0 negative"' in html
    assert f'class="chart-axis chart-zero" x1="{chart.zero_x:.1f}"' in html


def test_an_undefined_value_has_no_bar_and_prints_as_a_dash_not_zero() -> None:
    chart = bar_chart(
        "Fleiss' kappa",
        [("defined", 0.25), ("undefined", math.nan), ("none", None)],
        maximum=1.0,
        number_format="{:.3f}",
    )

    html = render_to_string("charts/bar.html", {"chart": chart})

    assert [bar.text for bar in chart.bars] == ["0.250", "-", "-"]
    assert html.count('<rect class="chart-bar') == 1
    assert "<title>undefined: -</title>" not in html
    assert '<th scope="row">undefined</th><td>-</td>' in html
    assert "0.000" not in html


def test_a_small_value_beside_a_large_one_still_shows_a_bar() -> None:
    bars = bar_chart("Labels", [("many", 10_000), ("few", 1), ("none", 0)]).bars

    assert [bar.width > 0 for bar in bars] == [True, True, False]
    assert bars[1].width >= 2


def test_durations_under_an_hour_are_in_minutes() -> None:
    chart = bar_chart("Median hours", [("approve", 0.2), ("reject", 1.5)], number_format=hours)

    assert [bar.text for bar in chart.bars] == ["12 min", "1.5 h"]
    assert ">12 min<" in render_to_string("charts/bar.html", {"chart": chart})


def test_columns_carry_their_values_and_small_ones_are_visible() -> None:
    chart = column_chart("Rounds", [("1 round", 120), ("2 rounds", 1), ("3 rounds", 0)])

    html = render_to_string("charts/columns.html", {"chart": chart})

    assert [column.text for column in chart.columns] == ["120", "1", "0"]
    assert chart.columns[1].height >= 2
    for value in ("120", "1", "0"):
        assert f'text-anchor="middle">{value}</text>' in html


def test_values_too_wide_for_their_column_are_left_to_the_table() -> None:
    chart = column_chart("Per day", [(f"d{i}", 12_345) for i in range(60)])

    assert not any(column.show_value for column in chart.columns)
    html = render_to_string("charts/columns.html", {"chart": chart})
    assert "chart-column-value" not in html and html.count("<td>12,345</td>") == 60


def test_a_scatter_chart_joins_its_frontier_left_to_right_and_skips_undefined_points() -> None:
    chart = charts.scatter_chart(
        "Models",
        [
            charts.ScatterItem("right", 2.0, 1.0, frontier=True),
            charts.ScatterItem("left", 1.0, 2.0, (0.75, 1.25), (1.5, 2.5), frontier=True),
            charts.ScatterItem("inside", 1.5, 1.2),
            charts.ScatterItem("unscored", 1.5, math.nan),
        ],
        x_title="Helpfulness",
        y_title="Safety",
    )

    left, right = (next(p for p in chart.points if p.label == name) for name in ("left", "right"))
    assert chart.frontier_line == f"{left.cx:.1f},{left.cy:.1f} {right.cx:.1f},{right.cy:.1f}"
    assert [p.label for p in chart.drawn] == ["right", "left", "inside"]
    assert next(p for p in chart.points if p.label == "unscored").y_text == charts.UNDEFINED
    # The axes span the points and intervals, 0.75 to 2.75, in round ticks.
    assert [label for label, _ in chart.x_ticks] == ["0.75", "1.25", "1.75", "2.25", "2.75"]
    assert left.low_x < left.cx < left.high_x
    assert left.low_y > left.cy > left.high_y  # SVG's y grows downwards


def test_a_scatter_charts_labels_are_escaped_and_each_point_is_a_link() -> None:
    chart = charts.scatter_chart(
        "Models",
        [charts.ScatterItem("<b>agent</b>", 1.0, 2.0, href="/records/?agent=%3Cb%3E")],
        x_title="Helpfulness",
        y_title="Safety",
    )

    html = render_to_string("charts/scatter.html", {"chart": chart})

    assert "<b>agent</b>" not in html
    assert "&lt;b&gt;agent&lt;/b&gt;" in html
    assert '<a class="chart-point-link" href="/records/?agent=%3Cb%3E"' in html
