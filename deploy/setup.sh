#!/usr/bin/env bash
# Everything `npm start` and `npm test` need on a fresh clone: nats-server, npm dependencies, a signed build
# with its management app.
# Idempotent and quick when nothing changed. --quiet prints only what it does.
set -euo pipefail
cd "$(dirname "$0")/.."
quiet=false
[ "${1:-}" = "--quiet" ] && quiet=true
say() { $quiet || echo "setup: $*"; }
act() { echo "setup: $*"; }

# nats-server is needed to run at all; libnbd-bin (nbdinfo, nbdcopy) only by the NBD export's
# tests, chromium only by the management app's browser test, prometheus (promtool, prometheus) only by
# the metrics' tests (docs/metrics.md).
missing=()
command -v nats-server >/dev/null 2>&1 || missing+=(nats-server)
command -v nbdinfo >/dev/null 2>&1 || missing+=(libnbd-bin)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    apt=(env DEBIAN_FRONTEND=noninteractive apt-get)
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    apt=(sudo -n env DEBIAN_FRONTEND=noninteractive apt-get)
  else
    apt=()
  fi
  if [ ${#apt[@]} -gt 0 ]; then
    act "installing ${missing[*]} with apt-get"
    "${apt[@]}" update -qq >/dev/null
    # The optional packages must not cost the required one: on failure, nats-server alone.
    # prometheus alone without what it recommends: its node exporter would run as a service of this machine.
    others=()
    for package in "${missing[@]}"; do [ "$package" = prometheus ] || others+=("$package"); done
    install_all() {
      [ ${#others[@]} -eq 0 ] || "${apt[@]}" install -y -qq "${others[@]}" >/dev/null || return 1
      [ ${#others[@]} -eq ${#missing[@]} ] || "${apt[@]}" install -y -qq --no-install-recommends prometheus >/dev/null
    }
    install_all || {
      act "could not install all of ${missing[*]}; the tests that need what is missing will be skipped"
      command -v nats-server >/dev/null 2>&1 || "${apt[@]}" install -y -qq nats-server >/dev/null
    }
  elif ! command -v nats-server >/dev/null 2>&1; then
    echo "setup: nats-server is missing and this process may not install it. Run:" >&2
    echo "  sudo apt-get install ${missing[*]}" >&2
    exit 1
  else
    act "${missing[*]} missing (the tests that need them will be skipped); to install: sudo apt-get install ${missing[*]}"
  fi
fi
say "nats-server $(nats-server --version 2>&1 | head -1)"

if [ ! -d node_modules ] || [ package.json -nt node_modules/.package-lock.json ] || { [ -f package-lock.json ] && [ package-lock.json -nt node_modules/.package-lock.json ]; }; then
  act "installing npm dependencies"
  # npm install, not npm ci: npm 11 writes lock files whose optional platform packages its own ci rejects.
  npm install --no-audit --no-fund --loglevel=error
fi

# tap builds its test class from the plugins .taprc names, at its first run; but that run still
# loads the loaders of the default set (ts-node, the mock hooks): about 2 s of every test process.
# Built here, every run of tap loads only what .taprc names.
if [ -f .taprc ] && { [ ! -f .tap/plugins/package.json ] || [ .taprc -nt .tap/plugins/package.json ]; }; then
  act "building tap's plugins"
  npx tap build >/dev/null
  touch .tap/plugins/package.json
fi

# The signed build: compiled when a TypeScript source changed. Signing builds the management app
# (webroot/, with the client/ and protocol/ code it imports) into it as its factory image, so the app
# alone changing costs a bundle and a signature, no compile.
stamp=dist/firmware.json
compiled=(protocol machines hal metrics eventstore bus image client audit actors gateway runtime factory cloud authenticator cli bin bench deploy
  tsconfig.json package.json)
newer() { [ -n "$(find "$@" -newer "$stamp" -type f -print -quit 2>/dev/null)" ]; }
if [ ! -f "$stamp" ] || newer "${compiled[@]}"; then
  act "building"
  rm -rf dist
  npx tsc -p tsconfig.json
  node dist/deploy/sign-build.js >/dev/null
elif [ ! -f dist/factory-webroot.img ] || newer webroot; then
  act "building the management app"
  node dist/deploy/sign-build.js >/dev/null
fi
# The web authenticator hem-cloud serves (dist-authapp/): bundled again when its page or the code it bundles changed.
page=dist-authapp/app.js
bundled=(authapp authenticator protocol client deploy/build-authapp.ts deploy/webroot-budget.ts package.json)
if [ ! -f "$page" ] || [ -n "$(find "${bundled[@]}" -newer "$page" -type f -print -quit)" ]; then
  act "building the web authenticator"
  node dist/deploy/build-authapp.js >/dev/null
fi
say "ready"
