"""Server-rendered bar charts (the CSP allows no inline script): bar geometry in an SVG that stretches to fill
its frame, and the axes' labels as HTML positioned over it, so text stays readable at any width."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

# About this many labels under the x axis; every other one is hidden on a phone (style.css).
X_TICKS = 6
BAR_SLOT = 10  # viewBox units per bar; a bar takes 8 of them, the rest is the gap


@dataclass(frozen=True, slots=True)
class Bar:
    label: str  # the bucket as the table of figures names it
    count: int
    x: float
    height: float  # in percent of the plot's height
    part: int = 0  # how many of ``count`` are drawn apart, at its foot (the usage history's 429s)
    part_height: float = 0.0


@dataclass(frozen=True, slots=True)
class Tick:
    text: str
    left: float  # percent of the plot's width, the centre of its bar
    minor: bool


@dataclass(frozen=True, slots=True)
class Chart:
    bars: list[Bar]
    ticks: list[Tick]
    top: int  # the y scale's top: a round number at or above the tallest bar
    width: int  # of the viewBox

    @property
    def total(self) -> int:
        return sum(bar.count for bar in self.bars)

    @property
    def middle(self) -> str:
        """The label of the y scale's middle line ("2.5" under a top of 5); none under a top of 1."""
        return "" if self.top == 1 else f"{self.top // 2:,}" if self.top % 2 == 0 else f"{self.top / 2:,}"

    @property
    def parts(self) -> int:
        return sum(bar.part for bar in self.bars)

    @property
    def tallest(self) -> Bar | None:
        return max(self.bars, key=lambda bar: bar.count, default=None)


def nice_top(value: int) -> int:
    """The smallest 1, 2 or 5 times a power of ten at or above ``value`` (at least 1): the y scale's top."""
    if value <= 1:
        return 1
    power: int = 10 ** int(math.log10(value))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= value)


def bar_chart(points: list[tuple[datetime, int]], label: str, tick: str, parts: list[int] | None = None) -> Chart:
    """Bars of ``points`` (oldest first), with ``parts`` of each drawn apart; ``label`` and ``tick`` are the
    strftime forms of a bar's name in the table and of the x axis' labels."""
    top = nice_top(max((count for _, count in points), default=0))
    count = max(len(points), 1)
    parts = parts or [0] * len(points)
    bars = [Bar(at.strftime(label), n, i * BAR_SLOT + 1, round(100 * n / top, 2), part, round(100 * part / top, 2))
            for i, ((at, n), part) in enumerate(zip(points, parts, strict=True))]
    step = max(math.ceil(len(points) / X_TICKS), 1)
    ticks = [Tick(_tick_text(at, tick), round(100 * (i + 0.5) / count, 2), bool((i // step) % 2))
             for i, (at, _) in enumerate(points) if i % step == 0]
    return Chart(bars, ticks, top, count * BAR_SLOT)


def _tick_text(at: datetime, form: str) -> str:
    """Hour ticks name the day at midnight, so a 24-hour chart still says which day is which."""
    if "%H" in form and at.hour == 0:
        return at.strftime("%d %b")
    return at.strftime(form).lstrip("0") if form.startswith("%d") else at.strftime(form)
