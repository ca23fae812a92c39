"""Entry script of the PyInstaller bundle: the same as the ``prvgui`` console command."""
import sys

from prvgui.cli import main

if __name__ == "__main__":
    sys.exit(main())
