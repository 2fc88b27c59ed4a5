"""How the claims write a number: as many decimals as show an interval's width, and a real minus sign."""

from __future__ import annotations

import math


def _g(value: float) -> str:
    return f"{value:.4g}".replace("-", "−")


def _decimals(low: float, high: float, value: float) -> int:
    """Decimals that show an interval's width to two significant digits (at most 6)."""
    width = abs(high - low)
    scale = width if width > 0 else abs(value)
    if scale == 0 or not math.isfinite(scale):
        return 2
    return int(min(6, max(0, 1 - math.floor(math.log10(scale)))))


def _fmt(value: float, decimals: int, sign: bool = False) -> str:
    text = f"{value:+.{decimals}f}" if sign else f"{value:.{decimals}f}"
    return text.replace("-", "−")


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"
