#!/usr/bin/env bash
# Debian's chromium, for the browser tests (tests/browser drive it through Playwright with
# executable_path=/usr/bin/chromium; no browser is ever downloaded by Playwright).
#
#   sudo bash scripts/chromium-local.sh
#
# Idempotent. Exit status: 0 chromium runs headless; 3 the package could not be installed (no
# package registry, or not Debian): the browser tests then skip; anything else: installed but
# it does not start.
set -euo pipefail

say() { echo "chromium-local: $*" >&2; }
PACKAGES=(chromium)
# shellcheck source=debian-packages.sh
source "$(dirname "$0")/debian-packages.sh"

[ "$(id -u)" -eq 0 ] || { say "run as root (it installs a package)"; exit 1; }
install_packages
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
# A blank page, headless, with the flags the tests use: proves the binary starts here.
if ! timeout 60 /usr/bin/chromium --headless --no-sandbox --disable-gpu --disable-quic \
        --no-first-run --disable-background-networking --disable-component-update \
        --disable-sync --user-data-dir="$profile" --dump-dom about:blank >/dev/null 2>&1; then
    say "error: /usr/bin/chromium is installed but does not start headless"; exit 1
fi
say "ready: $(/usr/bin/chromium --version 2>/dev/null | head -n 1)"
