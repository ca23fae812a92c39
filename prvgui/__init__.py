"""prvgui: a desktop calculator for certified differential-privacy accounting."""

__version__ = "0.1.0"
