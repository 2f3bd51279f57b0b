#!/usr/bin/env bash
# The browser the app's tests drive (tests/app/test_app_browser.py): Debian's chromium, installed with
# apt-get when it is missing and this user is root or may use sudo without a password. `make test`
# runs this before pytest and passes what it prints on standard output as SPEEDTRAP_NO_BROWSER:
# nothing when a browser is there, else the one-line reason the browser tests will skip (also said
# on standard error), which they then give even with CI=true.
set -u
if [ -n "${SPEEDTRAP_CHROMIUM:-}" ] || command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then
  exit 0
fi
reason=""
sudo=""
if ! command -v apt-get >/dev/null 2>&1; then
  reason="no chromium, and no apt-get to install it (install a Chromium, or set SPEEDTRAP_CHROMIUM to one)"
elif [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true >/dev/null 2>&1; then
    sudo="sudo -n"
  else
    reason="no chromium, and installing it needs root or sudo (run: sudo apt-get install chromium)"
  fi
fi
if [ -z "$reason" ]; then
  echo "make test: installing Debian's chromium for the browser tests (apt-get install chromium)" >&2
  if $sudo apt-get update -qq >/dev/null 2>&1 \
    && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null 2>&1 \
    && command -v chromium >/dev/null 2>&1; then
    exit 0
  fi
  reason="no chromium, and apt-get could not install it (no network or no package?)"
fi
echo "make test: $reason: the browser tests will skip" >&2
echo "$reason"
