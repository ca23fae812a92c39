"""What the command line's modules share (cli.py and its subcommand modules, which cli.py imports)."""
from __future__ import annotations

import math


def number(text: str) -> float | str:
    """A finite number as a float; anything else stays text, for the option's own check to
    reject with a message that names it (``--delta must be ...; you typed 1e400``)."""
    try:
        v = float(text)
    except ValueError:
        return text
    return v if math.isfinite(v) else text
