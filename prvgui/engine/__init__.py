"""What the window asks of the accounting, and where it runs.

``view_model`` turns one request (rows, targets, the curves wanted) into one Result, part by
part, and prices it first; ``host`` runs it in a process of its own beside the window. Neither
imports Qt. May import: ``prvgui.accounting``."""
