#!/usr/bin/env bash
# Fuzzes every target of the given packages for FUZZTIME each (go test
# -fuzz takes one target of one package at a time). A failing input is
# written under the package's testdata/fuzz, where `go test` replays it
# from then on.
set -euo pipefail
FUZZTIME="${FUZZTIME:-1m}"
GO="${GO:-go}"
for pkg in "$@"; do
  for target in $($GO test -list '^Fuzz' "$pkg" | grep '^Fuzz'); do
    echo "== $pkg $target ($FUZZTIME)"
    $GO test -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" "$pkg"
  done
done
