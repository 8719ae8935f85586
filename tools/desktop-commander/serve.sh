#!/bin/sh
# desktop-commander as the harness starts it: serve.sh ALLOWED_DIR (the harness passes {parent}, the
# folder of every scenario's workspace). Its HOME (config, logs, feature-flag cache, tool history)
# is a fresh temporary folder removed on exit; its config allows ALLOWED_DIR only; no telemetry, no
# onboarding text injected into results, no feature flags fetched from the network (DC_FLAG_URL
# points at a closed local port).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
allowed=${1:?usage: serve.sh ALLOWED_DIR}
# Named harness-tool-home-*: snapshots mask it as ${tool-home} (harness/record/snapshot/normalise.py).
home=$(mktemp -d "${TMPDIR:-/tmp}/harness-tool-home-XXXXXXXX")
trap 'rm -rf "$home"' EXIT INT TERM HUP
mkdir -p "$home/.claude-server-commander"
# At start-up it looks for a browser (for writing PDFs) in its puppeteer cache, then in the system,
# and downloads one when it finds none. A stand-in in the cache, which only fails, stops the download:
# reading, writing and editing files need no browser.
browser="$home/.claude-server-commander/puppeteer-cache/chrome/none/chrome-linux64"
mkdir -p "$browser"
printf '#!/bin/sh\necho "no browser: serve.sh allows no run-time download" >&2\nexit 1\n' > "$browser/chrome"
chmod +x "$browser/chrome"
node -e 'process.stdout.write(JSON.stringify({telemetryEnabled: false, onboarding_injection: false, allowedDirectories: [process.argv[1]]}))' \
  "$allowed" > "$home/.claude-server-commander/config.json"
HOME="$home" DESKTOP_COMMANDER_DISABLE_TELEMETRY=1 DC_FLAG_URL=http://127.0.0.1:9/flags.json \
  node "$here/node_modules/@wonderwhy-er/desktop-commander/dist/index.js" --no-onboarding
