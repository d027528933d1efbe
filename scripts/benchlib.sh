# Sourced by the bench scripts from the repository's root: $out is where
# results go (BENCH_OUT, default bench-out/), $bin the built binary. Peers and measuring tools are installed
# when missing and we can: as root with apt-get, which updates its lists
# only when an install fails.
can_install() { [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; }
apt_install() {
	echo "bench: installing $*"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null ||
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null; }
}

out=${BENCH_OUT:-bench-out}
mkdir -p "$out"
bin=bin/latscope
[ -x "$bin" ] || { echo "bench: build first (make build)"; exit 1; }
