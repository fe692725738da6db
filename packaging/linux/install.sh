#!/bin/sh
# Install Companion from the Linux tarball into ~/.local (no root needed):
#   ~/.local/opt/companion/            the app
#   ~/.local/bin/companion             the command
#   ~/.local/share/applications/       the menu entry
#   ~/.local/share/icons/hicolor/256x256/apps/companion.png
# `./install.sh --uninstall` removes those again (your config and history stay).
# System libraries the app needs: PortAudio and espeak-ng, e.g. on Debian/Ubuntu
#   sudo apt install libportaudio2 libespeak-ng1 espeak-ng-data libxcb-cursor0
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
PREFIX=${PREFIX:-"$HOME/.local"}
APP="$PREFIX/opt/companion"
BIN="$PREFIX/bin/companion"
DESKTOP="$PREFIX/share/applications/companion.desktop"
ICON="$PREFIX/share/icons/hicolor/256x256/apps/companion.png"

if [ "${1:-}" = "--uninstall" ]; then
    rm -rf "$APP" "$BIN" "$DESKTOP" "$ICON"
    echo "Companion removed from $PREFIX"
    exit 0
fi

mkdir -p "$PREFIX/opt" "$PREFIX/bin" "$(dirname "$DESKTOP")" "$(dirname "$ICON")"
rm -rf "$APP"
cp -a "$HERE/companion" "$APP"
ln -sf "$APP/companion" "$BIN"
sed -e "s|^Exec=companion|Exec=$APP/companion|" -e "s|^TryExec=companion|TryExec=$APP/companion|" \
    "$HERE/companion.desktop" > "$DESKTOP"
cp "$HERE/companion.png" "$ICON"
command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database -q "$(dirname "$DESKTOP")" || true

missing=""
for lib in libportaudio.so.2 libespeak-ng.so.1 libxcb-cursor.so.0; do
    ldconfig -p 2>/dev/null | grep -q "$lib" || missing="$missing $lib"
done
[ -n "$missing" ] && echo "note: these system libraries were not found:$missing (see the comment at the top of install.sh)"
echo "Companion installed: run 'companion' (make sure $PREFIX/bin is on your PATH), or find it in the menu."
echo "Check it with: companion --self-test"
