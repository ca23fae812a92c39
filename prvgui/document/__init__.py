"""The composition document, its file format and CSV export (no Qt)."""
from .fileio import FileFormatError, dumps, load, loads, save, write_curve_csv
from .model import KIND_TITLES, Document, RowSpec, Targets, param_names

__all__ = ["Document", "RowSpec", "Targets", "KIND_TITLES", "param_names",
           "FileFormatError", "load", "loads", "save", "dumps", "write_curve_csv"]
