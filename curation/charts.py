"""Charts drawn on the server as SVG: no script, nothing inline the CSP forbids.

Each function turns numbers into the shapes of one chart (coordinates in SVG units); the
templates in templates/charts/ draw them, escaping every label, and follow each chart with its
numbers as a table for screen readers and for copying. Colours come from CSS classes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

WIDTH = 640
LABEL_WIDTH = 180
VALUE_WIDTH = 70
BAR_HEIGHT = 22
BAR_GAP = 8
COLUMN_AREA_HEIGHT = 180
AXIS_HEIGHT = 40


@dataclass(frozen=True)
class Bar:
    label: str
    value: float
    # The value as shown (a count, a percentage, a score).
    text: str
    y: float
    width: float
    series: int = 0
    # An interval around the value (a 95% confidence interval), in SVG x coordinates.
    low_x: float | None = None
    high_x: float | None = None


@dataclass(frozen=True)
class BarChart:
    title: str
    bars: list[Bar]
    height: float
    width: float = WIDTH
    label_width: float = LABEL_WIDTH
    plot_width: float = WIDTH - LABEL_WIDTH - VALUE_WIDTH
    unit: str = ""
    bar_height: float = BAR_HEIGHT
    legend: list[tuple[int, str]] = field(default_factory=list)

    @property
    def value_x(self) -> float:
        return self.label_width + self.plot_width + 6


def bar_chart(
    title: str,
    items: Sequence[tuple[str, float]],
    *,
    maximum: float | None = None,
    unit: str = "",
    number_format: str = "{:,.0f}",
    intervals: Sequence[tuple[float, float] | None] | None = None,
    series: Sequence[int] | None = None,
    legend: Sequence[tuple[int, str]] = (),
) -> BarChart:
    """Horizontal bars, one per (label, value), scaled to `maximum` (default: the largest)."""
    top = maximum if maximum is not None else max((value for _, value in items), default=0)
    plot = WIDTH - LABEL_WIDTH - VALUE_WIDTH

    def x(value: float) -> float:
        return 0 if top <= 0 else plot * max(0.0, min(value, top)) / top

    bars = []
    for index, (label, value) in enumerate(items):
        interval = intervals[index] if intervals is not None else None
        bars.append(
            Bar(
                label=label,
                value=value,
                text=number_format.format(value) + unit,
                y=index * (BAR_HEIGHT + BAR_GAP),
                width=x(value),
                series=series[index] if series is not None else 0,
                low_x=LABEL_WIDTH + x(interval[0]) if interval else None,
                high_x=LABEL_WIDTH + x(interval[1]) if interval else None,
            )
        )
    height = max(len(bars) * (BAR_HEIGHT + BAR_GAP), BAR_HEIGHT)
    return BarChart(title=title, bars=bars, height=height, unit=unit, legend=list(legend))


@dataclass(frozen=True)
class Column:
    label: str
    value: float
    text: str
    x: float
    y: float
    width: float
    height: float
    # Whether to print the label under the axis (every column when few, some when many).
    show_label: bool


@dataclass(frozen=True)
class ColumnChart:
    title: str
    columns: list[Column]
    width: float = WIDTH
    height: float = COLUMN_AREA_HEIGHT + AXIS_HEIGHT
    axis_y: float = COLUMN_AREA_HEIGHT
    top_text: str = ""


def column_chart(
    title: str, items: Sequence[tuple[str, float]], *, number_format: str = "{:,.0f}"
) -> ColumnChart:
    """Vertical columns in order (days, rounds, 0..k labels), scaled to the largest."""
    top = max((value for _, value in items), default=0)
    slot = WIDTH / max(len(items), 1)
    # Label at most about twelve columns, so that labels never overlap.
    label_every = max(1, -(-len(items) // 12))
    columns = []
    for index, (label, value) in enumerate(items):
        height = 0 if top <= 0 else (COLUMN_AREA_HEIGHT - 16) * value / top
        columns.append(
            Column(
                label=label,
                value=value,
                text=number_format.format(value),
                x=index * slot + slot * 0.1,
                y=COLUMN_AREA_HEIGHT - height,
                width=slot * 0.8,
                height=height,
                show_label=index % label_every == 0,
            )
        )
    return ColumnChart(title=title, columns=columns, top_text=number_format.format(top))


@dataclass(frozen=True)
class Cell:
    x: float
    y: float
    value: float
    text: str
    # 0..4, the shade class of the cell.
    shade: int


@dataclass(frozen=True)
class Heatmap:
    title: str
    row_labels: list[tuple[str, float]]
    column_labels: list[tuple[str, float]]
    cells: list[Cell]
    rows: list[list[Cell]]
    row_title: str
    column_title: str
    size: float
    width: float
    height: float
    label_width: float = 120


def heatmap(
    title: str,
    row_labels: Sequence[str],
    column_labels: Sequence[str],
    values: Sequence[Sequence[float]],
    *,
    row_title: str = "",
    column_title: str = "",
    number_format: str = "{:,.0f}",
) -> Heatmap:
    """A grid of shaded cells (a confusion matrix): rows by columns."""
    size = 64
    label_width = 120
    top = max((value for row in values for value in row), default=0)
    rows = []
    for r, row in enumerate(values):
        cells = []
        for c, value in enumerate(row):
            shade = 0 if top <= 0 else min(4, int(4 * value / top + 0.5))
            cells.append(
                Cell(
                    x=label_width + c * size,
                    y=30 + r * size,
                    value=value,
                    text=number_format.format(value),
                    shade=shade,
                )
            )
        rows.append(cells)
    return Heatmap(
        title=title,
        row_labels=[(label, 30 + r * size + size / 2) for r, label in enumerate(row_labels)],
        column_labels=[
            (label, label_width + c * size + size / 2) for c, label in enumerate(column_labels)
        ],
        cells=[cell for row in rows for cell in row],
        rows=rows,
        row_title=row_title,
        column_title=column_title,
        size=size,
        width=label_width + len(column_labels) * size + 10,
        height=30 + len(row_labels) * size + 10,
        label_width=label_width,
    )
