"""The desktop window (PySide6 + pyqtgraph): thin Qt adapters over the document and the engine.

This is the only package of prvgui that imports Qt. Importing ``prvgui.gui`` itself loads
nothing; ``prvgui.gui.app.run`` builds the application.
"""
