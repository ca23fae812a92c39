#!/usr/bin/env bash
# Add prvgui to the desktop's application menu (Linux, freedesktop.org), for this user.
#
#     install-desktop-entry.sh [--exec COMMAND] [--uninstall]
#
# Installs the .desktop entry, the icons (SVG and PNG sizes) and the AppStream metainfo under
# ${XDG_DATA_HOME:-~/.local/share}. Run from a checkout it launches `prvgui` from PATH (pip or
# pipx install); run from a PyInstaller bundle it launches the bundle's own executable.
# --exec overrides the command (an absolute path; no quotes, backslashes, $ or ` in it).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DATA="${XDG_DATA_HOME:-$HOME/.local/share}"
EXEC=""
UNINSTALL=0
while [ $# -gt 0 ]; do
  case "$1" in
    --exec) EXEC="$2"; shift 2 ;;
    --uninstall) UNINSTALL=1; shift ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "install-desktop-entry.sh: unknown argument: $1" >&2; exit 2 ;;
  esac
done

if [ -d "$HERE/_internal/prvgui/resources" ]; then      # inside the bundle
  RES="$HERE/_internal/prvgui/resources"
  EXEC="${EXEC:-$HERE/prvgui}"
elif [ -d "$HERE/../resources/icons" ]; then              # in a checkout
  RES="$(cd "$HERE/../resources" && pwd)"
else
  echo "install-desktop-entry.sh: cannot find the prvgui resources next to $HERE" >&2
  exit 1
fi

SIZES="16 32 48 64 128 256"
APPS="$DATA/applications"
ICONS="$DATA/icons/hicolor"
META="$DATA/metainfo"

if [ "$UNINSTALL" = 1 ]; then
  rm -f "$APPS/prvgui.desktop" "$META/io.github.prvgui.metainfo.xml" "$ICONS/scalable/apps/prvgui.svg"
  for s in $SIZES; do rm -f "$ICONS/${s}x${s}/apps/prvgui.png"; done
  echo "removed prvgui's desktop entry from $DATA"
  exit 0
fi

mkdir -p "$APPS" "$META" "$ICONS/scalable/apps"
install -m 644 "$RES/icons/prvgui.svg" "$ICONS/scalable/apps/prvgui.svg"
for s in $SIZES; do
  mkdir -p "$ICONS/${s}x${s}/apps"
  install -m 644 "$RES/icons/prvgui-$s.png" "$ICONS/${s}x${s}/apps/prvgui.png"
done
install -m 644 "$RES/io.github.prvgui.metainfo.xml" "$META/io.github.prvgui.metainfo.xml"
if [ -n "$EXEC" ]; then
  case "$EXEC" in
    *[\"\\\$\`]*) echo "install-desktop-entry.sh: unsupported character in --exec path" >&2; exit 2 ;;
  esac
  sed -e "s|^Exec=.*|Exec=\"$EXEC\" %f|" -e "s|^TryExec=.*|TryExec=$EXEC|" \
    "$RES/prvgui.desktop" > "$APPS/prvgui.desktop"
  chmod 644 "$APPS/prvgui.desktop"
else
  install -m 644 "$RES/prvgui.desktop" "$APPS/prvgui.desktop"
fi
command -v update-desktop-database >/dev/null && update-desktop-database -q "$APPS" 2>/dev/null || true
command -v gtk-update-icon-cache >/dev/null && gtk-update-icon-cache -q -t "$ICONS" 2>/dev/null || true
echo "installed $APPS/prvgui.desktop (Exec: $(sed -n 's/^Exec=//p' "$APPS/prvgui.desktop"))"
