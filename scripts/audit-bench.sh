#!/usr/bin/env bash
# make bench's row for issue 21 (also run alone): latscope audit beside
# ausearch -i on a generated audit.log of each size in AUDIT_MB (MB).
#
#   AUDIT_MB="100 1000" BENCH_DIR=/tmp/auditbench scripts/audit-bench.sh
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/benchlib.sh
. scripts/benchlib.sh
# Issue 21: read and correlate at >= 200 MB/s on one core, memory bounded
# by open sessions, beside ausearch -i on the same file. AUDIT_MB lists the
# sizes (default "100 1000"); ausearch takes minutes a GB: it runs once at
# sizes over 100 MB.
audit_bench() {
command -v ausearch >/dev/null || { can_install && apt_install auditd || true; }
dir=${BENCH_DIR:-$(mktemp -d)}
pin=""
command -v taskset >/dev/null && pin="taskset -c 0"
: > "$out/audit-summary.txt"
for mb in ${AUDIT_MB:-100 1000}; do
	gen="$dir/auditgen-$mb"
	[ -f "$gen/audit.log" ] || go run ./scripts/auditgen -mb "$mb" -out "$gen"
	size=$(stat -c %s "$gen/audit.log")
	cat "$gen/audit.log" > /dev/null # page-cache it
	ls_cmd="$pin $bin audit $gen/adump $gen/audit.log $gen/auth.log --year 2026 --format json"
	au_cmd="$pin ausearch -i -if $gen/audit.log"
	runs=5; au_runs=3
	[ "$mb" -gt 100 ] && { runs=3; au_runs=1; }
	if command -v hyperfine >/dev/null; then
		hyperfine --warmup 1 --runs "$runs" --export-json "$out/audit-$mb-hyperfine.json" -n latscope "$ls_cmd" | tee "$out/audit-$mb-hyperfine.txt"
		if command -v ausearch >/dev/null; then
			hyperfine --runs "$au_runs" --export-json "$out/audit-$mb-ausearch.json" -n ausearch "LC_ALL=C TZ=UTC $au_cmd" | tee -a "$out/audit-$mb-hyperfine.txt"
		fi
		python3 - "$out/audit-$mb-hyperfine.json" "$out/audit-$mb-ausearch.json" "$size" "$mb" <<'PY' | tee -a "$out/audit-summary.txt"
import json, os, sys
size, mb = int(sys.argv[3]), sys.argv[4]
def res(p):
    if not os.path.exists(p): return None
    return json.load(open(p))["results"][0]
l, a = res(sys.argv[1]), res(sys.argv[2])
def line(name, r):
    cpu = r["user"] + r["system"]
    print(f"{mb} MB {name:9s} median {r['median']:.3f} s wall ({size/r['median']/1e6:.0f} MB/s), {cpu:.3f} s CPU ({size/cpu/1e6:.0f} MB/s of CPU)")
line("latscope", l)
if a:
    line("ausearch", a)
    print(f"{mb} MB latscope is {a['median']/l['median']:.0f}x faster than ausearch -i (issue: >= 200 MB/s on one core)")
PY
	fi
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f "$mb MB latscope audit max RSS: %M KB, %e s" $ls_cmd > /dev/null 2>> "$out/audit-summary.txt" || true
		tail -1 "$out/audit-summary.txt"
	fi
done
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/audit-summary.txt"
[ -n "${BENCH_DIR:-}" ] || rm -rf "$dir"
}
audit_bench

