#!/usr/bin/env bash
# make fuzz: runs every native Go fuzz target in the module for $FUZZTIME
# (default 30s) to explore. A failing input is written to the package's
# testdata/fuzz/FuzzXxx/ by Go: commit it with the fix, and from then on
# `make test` replays it deterministically with the other corpus entries.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-30s}
# A fresh corpus cache per run: a large cached corpus from earlier long runs
# would not even be replayed in a few seconds (and Go then fails the run).
# Long runs keep the shared cache: FUZZCACHE=keep.
cache_flag=()
if [ "${FUZZCACHE:-}" != keep ]; then
	cache=$(mktemp -d)
	trap 'rm -rf "$cache"' EXIT
	cache_flag=(-test.fuzzcachedir "$cache")
fi
# Every target runs even after one fails, so one run reports every finding.
failed=()
for pkg in $(go list ./...); do
	dir=$(go list -f '{{.Dir}}' "$pkg")
	grep -lq '^func Fuzz' "$dir"/*_test.go 2>/dev/null || continue
	for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go | sed 's/^func //'); do
		echo "fuzz $pkg $target ($fuzztime)"
		for attempt in 1 2; do
			if out=$(go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" -fuzzminimizetime 1s "$pkg" "${cache_flag[@]}" 2>&1); then
				break
			fi
			# A real finding is written to testdata/fuzz; a failure without
			# one is Go's fuzz coordinator timing out on a loaded machine
			# ("context deadline exceeded"): run the target once more.
			if grep -q "Failing input written to" <<<"$out" || [ "$attempt" = 2 ]; then
				echo "$out"
				failed+=("$pkg $target")
				break
			fi
			echo "  no failing input written; retrying once"
		done
	done
done
if [ ${#failed[@]} -gt 0 ]; then
	echo
	echo "make fuzz: ${#failed[@]} target(s) found failing inputs (now in testdata/fuzz; commit each with its fix):"
	printf '  %s\n' "${failed[@]}"
	exit 1
fi
echo "make fuzz: no failing input found"
