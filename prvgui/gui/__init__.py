"""The desktop window (PySide6 + pyqtgraph): thin Qt adapters over the document and the engine.

This is the only package of prvgui that imports Qt; ``app.run`` builds the application.
"""
import sys

import PySide6

if sys.version_info < (3, 12) and PySide6.__version__.startswith("6.12."):
    # PySide6 6.12 returns None/True from void methods and emit() without a reference; on
    # CPython < 3.12 (no immortal objects) the interpreter aborts after a while.
    raise ImportError(f"PySide6 {PySide6.__version__} crashes on Python "
                      f"{sys.version_info.major}.{sys.version_info.minor}; "
                      "install 'PySide6-Essentials<6.12' (pip install -U '.')")
