# Sourced by the bench scripts. Peers and measuring tools are installed
# when missing and we can: as root with apt-get, which updates its lists
# only when an install fails.
can_install() { [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; }
apt_install() {
	echo "bench: installing $*"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null ||
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null; }
}
