#!/bin/sh
# Build, sign, notarize and package Companion.app as a .dmg (run on macOS, see README).
#   CODESIGN_IDENTITY="Developer ID Application: Name (TEAMID)" \
#   NOTARY_PROFILE=companion-notary  sh packaging/macos/build_dmg.sh
# Without CODESIGN_IDENTITY the app is ad-hoc signed (runs on this Mac only).
set -eu
cd "$(dirname "$0")/../.."
VERSION=$(python3 -c 'import tomllib;print(tomllib.load(open("pyproject.toml","rb"))["project"]["version"])')
APP=dist/Companion.app
DMG=dist/Companion-$VERSION-macos-$(uname -m).dmg

python packaging/build.py --windowed
"$APP/Contents/MacOS/companion" --self-test --report dist/selftest-report.json

IDENTITY=${CODESIGN_IDENTITY:--}
# Sign inside-out: every library, then the app, with the hardened runtime.
find "$APP/Contents" -type f \( -name '*.so' -o -name '*.dylib' \) -print0 |
    xargs -0 codesign --force --timestamp --options runtime --sign "$IDENTITY"
codesign --force --timestamp --options runtime \
    --entitlements packaging/macos/entitlements.plist --sign "$IDENTITY" "$APP"
codesign --verify --deep --strict --verbose=2 "$APP"

rm -rf dist/dmg "$DMG"
mkdir -p dist/dmg
cp -R "$APP" dist/dmg/
ln -s /Applications dist/dmg/Applications
hdiutil create -volname "Companion" -srcfolder dist/dmg -ov -format UDZO "$DMG"

if [ "$IDENTITY" != "-" ]; then
    codesign --force --timestamp --sign "$IDENTITY" "$DMG"
    if [ -n "${NOTARY_PROFILE:-}" ]; then
        xcrun notarytool submit "$DMG" --keychain-profile "$NOTARY_PROFILE" --wait
        xcrun stapler staple "$DMG"
    fi
fi
echo "built $DMG"
