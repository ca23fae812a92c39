#!/usr/bin/env bash
# Regenerate docs/screenshot.png (the README's picture) from the DP-SGD example, offscreen.
set -euo pipefail
cd "$(dirname "$0")/.."
QT_QPA_PLATFORM=offscreen prvgui --screenshot docs/screenshot.png resources/examples/dpsgd_mnist.json
