"""Charts drawn on the server as SVG: no script, nothing inline the CSP forbids.

Each function turns numbers into the shapes of one chart (coordinates in SVG units); the
templates in templates/charts/ draw them, escaping every label, and follow each chart with its
numbers as a table for screen readers and for copying. Colours come from CSS classes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TypeGuard

WIDTH = 640
LABEL_WIDTH = 180
VALUE_WIDTH = 70
BAR_HEIGHT = 22
BAR_GAP = 8
COLUMN_AREA_HEIGHT = 180
AXIS_HEIGHT = 40
# A value that is not zero is drawn at least this long, however small beside the largest.
SMALLEST_MARK = 2.0
# What a statistic that is undefined for the data (a kappa without variation) prints as.
UNDEFINED = "-"
# About how wide a character of a value label is (12 px text), to print only labels that fit.
CHARACTER_WIDTH = 7

NumberFormat = str | Callable[[float], str]


def hours(value: float) -> str:
    """A duration given in hours, as minutes under an hour: 0.2 -> "12 min", 2.25 -> "2.2 h"."""
    if value < 1:
        return f"{round(value * 60)} min"
    return f"{value:,.1f} h"


def is_defined(value: float | None) -> TypeGuard[float]:
    return value is not None and not math.isnan(value)


def _formatter(number_format: NumberFormat, unit: str) -> Callable[[float | None], str]:
    def text(value: float | None) -> str:
        if value is None or not is_defined(value):
            return UNDEFINED
        shown = number_format(value) if callable(number_format) else number_format.format(value)
        return shown + unit

    return text


@dataclass(frozen=True)
class Bar:
    label: str
    value: float | None
    # The value as shown (a count, a percentage, a score), or UNDEFINED.
    text: str
    y: float
    # Where the bar starts and how long it is, in SVG x coordinates: a negative value's bar
    # ends at zero, a positive one's starts there. No bar for an undefined value.
    x: float
    width: float
    series: int = 0
    # An interval around the value (a 95% confidence interval), in SVG x coordinates.
    low_x: float | None = None
    high_x: float | None = None

    @property
    def negative(self) -> bool:
        return self.value is not None and self.value < 0

    @property
    def defined(self) -> bool:
        return is_defined(self.value)


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
    # Where zero is: the left edge, unless some value or interval is below zero.
    zero_x: float = LABEL_WIDTH

    @property
    def value_x(self) -> float:
        return self.label_width + self.plot_width + 6

    @property
    def has_negative(self) -> bool:
        return self.zero_x > self.label_width


def bar_chart(
    title: str,
    items: Sequence[tuple[str, float | None]],
    *,
    maximum: float | None = None,
    unit: str = "",
    number_format: NumberFormat = "{:,.0f}",
    intervals: Sequence[tuple[float, float] | None] | None = None,
    series: Sequence[int] | None = None,
    legend: Sequence[tuple[int, str]] = (),
) -> BarChart:
    """Horizontal bars, one per (label, value), from zero to `maximum` (default: the largest),
    and to the left of zero as far as the lowest value or interval needs. An undefined value
    (None or NaN) has no bar and prints as UNDEFINED."""
    defined = [value for _, value in items if value is not None and is_defined(value)]
    lows = [interval[0] for interval in intervals or () if interval is not None]
    top = maximum if maximum is not None else max(defined, default=0)
    bottom = min([0.0, *defined, *lows])
    plot = WIDTH - LABEL_WIDTH - VALUE_WIDTH
    span = top - bottom

    def x(value: float) -> float:
        return LABEL_WIDTH + (
            0 if span <= 0 else plot * (max(bottom, min(value, top)) - bottom) / span
        )

    zero = x(0.0)
    text = _formatter(number_format, unit)
    bars = []
    for index, (label, value) in enumerate(items):
        interval = intervals[index] if intervals is not None else None
        start, width = zero, 0.0
        if value is not None and is_defined(value) and value != 0:
            width = max(abs(x(value) - zero), SMALLEST_MARK)
            start = zero - width if value < 0 else zero
        bars.append(
            Bar(
                label=label,
                value=value,
                text=text(value),
                y=index * (BAR_HEIGHT + BAR_GAP),
                x=start,
                width=width,
                series=series[index] if series is not None else 0,
                low_x=x(interval[0]) if interval else None,
                high_x=x(interval[1]) if interval else None,
            )
        )
    height = max(len(bars) * (BAR_HEIGHT + BAR_GAP), BAR_HEIGHT)
    return BarChart(
        title=title, bars=bars, height=height, unit=unit, legend=list(legend), zero_x=zero
    )


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
    # Whether the value fits above the column.
    show_value: bool = True

    @property
    def center_x(self) -> float:
        return self.x + self.width / 2


@dataclass(frozen=True)
class ColumnChart:
    title: str
    columns: list[Column]
    width: float = WIDTH
    height: float = COLUMN_AREA_HEIGHT + AXIS_HEIGHT
    axis_y: float = COLUMN_AREA_HEIGHT


def column_chart(
    title: str, items: Sequence[tuple[str, float]], *, number_format: NumberFormat = "{:,.0f}"
) -> ColumnChart:
    """Vertical columns in order (days, rounds, 0..k labels), scaled to the largest, each
    with its value above it where the value fits the column's width."""
    top = max((value for _, value in items), default=0)
    slot = WIDTH / max(len(items), 1)
    # Label at most about twelve columns, so that labels never overlap.
    label_every = max(1, -(-len(items) // 12))
    text = _formatter(number_format, "")
    columns = []
    for index, (label, value) in enumerate(items):
        height = 0.0 if top <= 0 else (COLUMN_AREA_HEIGHT - 16) * value / top
        if value > 0:
            height = max(height, SMALLEST_MARK)
        shown = text(value)
        columns.append(
            Column(
                label=label,
                value=value,
                text=shown,
                x=index * slot + slot * 0.1,
                y=COLUMN_AREA_HEIGHT - height,
                width=slot * 0.8,
                height=height,
                show_label=index % label_every == 0,
                show_value=len(shown) * CHARACTER_WIDTH <= slot,
            )
        )
    return ColumnChart(title=title, columns=columns)


@dataclass(frozen=True)
class Cell:
    x: float
    y: float
    value: float
    text: str
    # 0..4, the shade class of the cell.
    shade: int


# A heatmap's margins: the column axis's title and labels above the grid, the row axis's title
# (turned on its side) and labels to its left.
HEATMAP_CELL = 64
HEATMAP_TOP = 42
HEATMAP_LEFT = 144


@dataclass(frozen=True)
class Heatmap:
    title: str
    row_labels: list[tuple[str, float]]
    column_labels: list[tuple[str, float]]
    cells: list[Cell]
    rows: list[list[Cell]]
    # What the rows and the columns are (the reference and the judge; two score sources).
    row_title: str
    column_title: str
    size: float
    width: float
    height: float
    label_width: float = HEATMAP_LEFT

    @property
    def column_title_x(self) -> float:
        return self.label_width + len(self.column_labels) * self.size / 2

    @property
    def row_title_y(self) -> float:
        return HEATMAP_TOP + len(self.row_labels) * self.size / 2


def heatmap(
    title: str,
    row_labels: Sequence[str],
    column_labels: Sequence[str],
    values: Sequence[Sequence[float]],
    *,
    row_title: str,
    column_title: str,
    number_format: str = "{:,.0f}",
) -> Heatmap:
    """A grid of shaded cells (a confusion matrix): rows by columns, each axis with its title,
    which a reader needs to know which way the matrix reads."""
    size = HEATMAP_CELL
    top = max((value for row in values for value in row), default=0)
    rows = []
    for r, row in enumerate(values):
        cells = []
        for c, value in enumerate(row):
            shade = 0 if top <= 0 else min(4, int(4 * value / top + 0.5))
            cells.append(
                Cell(
                    x=HEATMAP_LEFT + c * size,
                    y=HEATMAP_TOP + r * size,
                    value=value,
                    text=number_format.format(value),
                    shade=shade,
                )
            )
        rows.append(cells)
    return Heatmap(
        title=title,
        row_labels=[
            (label, HEATMAP_TOP + r * size + size / 2) for r, label in enumerate(row_labels)
        ],
        column_labels=[
            (label, HEATMAP_LEFT + c * size + size / 2) for c, label in enumerate(column_labels)
        ],
        cells=[cell for row in rows for cell in row],
        rows=rows,
        row_title=row_title,
        column_title=column_title,
        size=size,
        width=HEATMAP_LEFT + len(column_labels) * size + 10,
        height=HEATMAP_TOP + len(row_labels) * size + 10,
    )


SCATTER_MARGIN_LEFT = 56
SCATTER_MARGIN_BOTTOM = 44
SCATTER_MARGIN_TOP = 12
SCATTER_MARGIN_RIGHT = 150
SCATTER_PLOT = 360


@dataclass(frozen=True)
class ScatterItem:
    """One point to draw: where it is, its 95% intervals on each axis, whether it is on the
    frontier, and the page it links to."""

    label: str
    x: float | None
    y: float | None
    x_interval: tuple[float, float] | None = None
    y_interval: tuple[float, float] | None = None
    frontier: bool = False
    href: str = ""


@dataclass(frozen=True)
class Point:
    label: str
    # The values as shown, or UNDEFINED.
    x_text: str
    y_text: str
    frontier: bool
    href: str
    # Whether it is drawn: both values defined. The rest are SVG coordinates.
    drawn: bool
    cx: float = 0.0
    cy: float = 0.0
    low_x: float | None = None
    high_x: float | None = None
    low_y: float | None = None
    high_y: float | None = None


@dataclass(frozen=True)
class ScatterChart:
    title: str
    x_title: str
    y_title: str
    points: list[Point]
    # The frontier's points joined left to right, as a polyline's `points`.
    frontier_line: str
    x_ticks: list[tuple[str, float]]
    y_ticks: list[tuple[str, float]]
    left: float = SCATTER_MARGIN_LEFT
    top: float = SCATTER_MARGIN_TOP
    right: float = SCATTER_MARGIN_LEFT + SCATTER_PLOT
    bottom: float = SCATTER_MARGIN_TOP + SCATTER_PLOT
    width: float = SCATTER_MARGIN_LEFT + SCATTER_PLOT + SCATTER_MARGIN_RIGHT
    height: float = SCATTER_MARGIN_TOP + SCATTER_PLOT + SCATTER_MARGIN_BOTTOM

    @property
    def drawn(self) -> list[Point]:
        return [point for point in self.points if point.drawn]

    @property
    def x_title_x(self) -> float:
        return (self.left + self.right) / 2

    @property
    def y_title_y(self) -> float:
        return (self.top + self.bottom) / 2


def scatter_chart(
    title: str,
    items: Sequence[ScatterItem],
    *,
    x_title: str,
    y_title: str,
    low: float = 0.0,
    high: float = 3.0,
    ticks: int = 5,
    number_format: NumberFormat = "{:.2f}",
) -> ScatterChart:
    """Points on two axes, each with its intervals as whiskers; the frontier points are joined
    by a line. Both axes span the points and their intervals, in steps of a tick, within `low`
    to `high` (the scale): models that differ by a tenth of a point are told apart. A point
    missing a value is not drawn and prints as UNDEFINED in the chart's table."""
    low, high = _span(items, low, high, ticks)
    span = high - low
    text = _formatter(number_format, "")

    def x(value: float) -> float:
        return SCATTER_MARGIN_LEFT + SCATTER_PLOT * (max(low, min(value, high)) - low) / span

    def y(value: float) -> float:
        return SCATTER_MARGIN_TOP + SCATTER_PLOT * (high - max(low, min(value, high))) / span

    points = []
    for item in items:
        point = Point(item.label, text(item.x), text(item.y), item.frontier, item.href, False)
        if is_defined(item.x) and is_defined(item.y):
            low_x, high_x = _whiskers(item.x_interval, x)
            low_y, high_y = _whiskers(item.y_interval, y)
            point = replace(
                point,
                drawn=True,
                cx=x(item.x),
                cy=y(item.y),
                low_x=low_x,
                high_x=high_x,
                low_y=low_y,
                high_y=high_y,
            )
        points.append(point)
    frontier = sorted((p.cx, p.cy) for p in points if p.drawn and p.frontier)
    values = [low + span * i / (ticks - 1) for i in range(ticks)]
    return ScatterChart(
        title=title,
        x_title=x_title,
        y_title=y_title,
        points=points,
        frontier_line=" ".join(f"{px:.1f},{py:.1f}" for px, py in frontier),
        x_ticks=[(f"{value:g}", x(value)) for value in values],
        y_ticks=[(f"{value:g}", y(value)) for value in values],
    )


def _span(items: Sequence[ScatterItem], low: float, high: float, ticks: int) -> tuple[float, float]:
    """The range both axes show: the points' and intervals' values, widened to whole quarter
    points (at least half a point across), within the scale's `low` to `high`."""
    values = [
        value
        for item in items
        if is_defined(item.x) and is_defined(item.y)
        for value in (item.x, item.y, *(item.x_interval or ()), *(item.y_interval or ()))
        if is_defined(value)
    ]
    if not values:
        return low, high
    step = 0.25
    bottom = max(low, math.floor(min(values) / step) * step)
    top = min(high, math.ceil(max(values) / step) * step)
    while top - bottom < 0.5 or round((top - bottom) / step) % (ticks - 1):
        # Widen by a step, upwards unless at the top, until the ticks fall on round values.
        if top < high:
            top += step
        elif bottom > low:
            bottom -= step
        else:
            break
    return bottom, top


def _whiskers(
    interval: tuple[float, float] | None, at: Callable[[float], float]
) -> tuple[float | None, float | None]:
    """Where an interval's ends are drawn on an axis; nowhere without both ends."""
    if interval is None or not all(is_defined(bound) for bound in interval):
        return None, None
    return at(interval[0]), at(interval[1])
