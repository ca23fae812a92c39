"""Entry script of the PyInstaller bundle: the same as the ``prvgui`` console command."""
import multiprocessing
import sys

from prvgui.cli import main

if __name__ == "__main__":
    multiprocessing.freeze_support()  # the window's engine process (engine/host.py) is spawned
    sys.exit(main())
