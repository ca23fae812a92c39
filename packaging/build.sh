#!/usr/bin/env bash
# Build the one-folder prvgui bundle with PyInstaller, in a clean virtual environment.
#
#     bash packaging/build.sh            # -> dist/prvgui/prvgui (run from any directory)
#
# Environment (all optional):
#   PYTHON                  interpreter for the build venv (default: python3); needs a shared libpython
#   PRVGUI_BUILD_DIR        scratch space: venv, source copy, PyInstaller work (default: <repo>/build/pkg)
#   PRVGUI_DIST_DIR         where the bundle folder goes (default: <repo>/dist); the bundle is $PRVGUI_DIST_DIR/prvgui
#   PRVGUI_REUSE_VENV=1     keep an existing build venv (faster rebuilds); prvgui itself is always reinstalled
#   PYINSTALLER_SPEC        PyInstaller requirement (default: pyinstaller>=6.10,<7)
#
# The checkout is not written to: the project is copied to the build dir and installed from there.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
PYTHON="${PYTHON:-python3}"
BUILD_DIR="${PRVGUI_BUILD_DIR:-$ROOT/build/pkg}"
DIST_DIR="${PRVGUI_DIST_DIR:-$ROOT/dist}"
PYINSTALLER_SPEC="${PYINSTALLER_SPEC:-pyinstaller>=6.10,<7}"
mkdir -p "$BUILD_DIR" "$DIST_DIR"
BUILD_DIR="$(cd "$BUILD_DIR" && pwd)"
DIST_DIR="$(cd "$DIST_DIR" && pwd)"
VENV="$BUILD_DIR/venv"
export PIP_DISABLE_PIP_VERSION_CHECK=1
start=$SECONDS

step() { printf '==> %s\n' "$*"; }

if [ "${PRVGUI_REUSE_VENV:-0}" != 1 ] || [ ! -x "$VENV/bin/python" ]; then
  step "creating a clean venv in $VENV (from $PYTHON)"
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --upgrade pip
fi
PY="$VENV/bin/python"

step "copying the project to $BUILD_DIR/src"
rm -rf "$BUILD_DIR/src"
mkdir -p "$BUILD_DIR/src"
for f in pyproject.toml README.md LICENSE prvgui resources; do
  if [ -e "$ROOT/$f" ]; then cp -R "$ROOT/$f" "$BUILD_DIR/src/"; fi
done
find "$BUILD_DIR/src" -name __pycache__ -prune -exec rm -rf {} +

step "installing prvgui and $PYINSTALLER_SPEC"
"$PY" -m pip install --quiet --force-reinstall --no-deps "$BUILD_DIR/src"
"$PY" -m pip install --quiet "$BUILD_DIR/src" "$PYINSTALLER_SPEC"

step "running PyInstaller ($("$PY" -m PyInstaller --version))"
cd "$BUILD_DIR"
QT_QPA_PLATFORM="${QT_QPA_PLATFORM:-offscreen}" "$PY" -m PyInstaller --noconfirm --clean --log-level WARN \
  --workpath "$BUILD_DIR/work" --distpath "$DIST_DIR" "$HERE/prvgui.spec"
cp "$HERE/install-desktop-entry.sh" "$DIST_DIR/prvgui/"

BUNDLE="$DIST_DIR/prvgui"
step "checking the bundle"
env -i HOME="${HOME:-/tmp}" PATH=/usr/bin:/bin "$BUNDLE/prvgui" --version

size=$(du -sh "$BUNDLE" | cut -f1)
echo
echo "Bundle: $BUNDLE ($size, built in $((SECONDS - start)) s)"
echo "Run:    $BUNDLE/prvgui [FILE]        (copy the whole folder to move it)"
echo "Menu:   $BUNDLE/install-desktop-entry.sh   (adds prvgui to the desktop's application menu)"
