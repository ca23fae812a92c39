"""prvgui: a desktop calculator for certified differential-privacy accounting."""
import os

__version__ = "0.1.0"

# The engine's arrays are long but its matrix products are small: one BLAS thread is enough,
# and NumPy then starts 10 ms faster and uses half the CPU time to import (measured). Only
# takes effect when prvgui is imported before NumPy; an explicit setting is kept.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
