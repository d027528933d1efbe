#!/usr/bin/env bash
# Runs every native Go fuzz target in the module for $FUZZTIME (default 5s).
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-5s}
for pkg in $(go list ./...); do
	dir=$(go list -f '{{.Dir}}' "$pkg")
	grep -lq '^func Fuzz' "$dir"/*_test.go 2>/dev/null || continue
	for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go | sed 's/^func //'); do
		echo "fuzz $pkg $target ($fuzztime)"
		if ! out=$(go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg" 2>&1); then
			echo "$out"
			exit 1
		fi
	done
done
