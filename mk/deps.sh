#!/bin/sh
# Installs the system packages flimflam builds with, runs, and tests with,
# when any is missing: apt-get on Debian and Ubuntu, dnf on Fedora. Does
# nothing when all are present. Without root it uses sudo where there is
# one; otherwise it prints the exact command and fails.

debian_pkgs="gcc make pkg-config libpipeline-dev libjansson-dev jq
linux-perf iperf3 nghttp2-client nghttp2-server nghttp2-proxy
nginx libnginx-mod-stream haproxy socat strace bats bats-assert bats-support chromium procps shellcheck sockperf openssl groff-base man-db
openssh-server openssh-client parallel iproute2 util-linux libsqlite3-dev sqlite3"
fedora_pkgs="gcc make pkgconf-pkg-config libpipeline-devel jansson-devel jq
perf iperf3 nghttp2 nginx nginx-mod-stream haproxy socat strace bats chromium procps-ng ShellCheck sockperf openssl groff-base man-db
openssh-server openssh-clients parallel iproute util-linux sqlite-devel sqlite"

# Ubuntu packages perf per kernel, as linux-tools-RELEASE (the same names
# ff-check suggests).
# shellcheck source=/dev/null
os_id=$( (. /etc/os-release || . /usr/lib/os-release) 2>/dev/null; echo "${ID:-}")
if [ "$os_id" = ubuntu ]; then
	debian_pkgs=$(echo "$debian_pkgs" |
		sed "s/linux-perf/linux-tools-common linux-tools-$(uname -r)/")
fi

# The missing packages become the positional parameters; $pm says which
# package manager installs them.
set --
if command -v apt-get >/dev/null 2>&1 && command -v dpkg-query >/dev/null 2>&1; then
	pm=apt
	for p in $debian_pkgs; do
		s=$(dpkg-query -W -f '${Status}' "$p" 2>/dev/null)
		case $s in *" installed") ;; *) set -- "$@" "$p" ;; esac
	done
	how="apt-get update && env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $*"
elif command -v dnf >/dev/null 2>&1; then
	pm=dnf
	for p in $fedora_pkgs; do
		rpm -q "$p" >/dev/null 2>&1 || set -- "$@" "$p"
	done
	how="dnf -y install $*"
else
	echo "deps: neither apt-get nor dnf found: install by hand: $debian_pkgs" >&2
	exit 1
fi
[ $# -eq 0 ] && exit 0

echo "deps: installing: $*" >&2
if [ "$(id -u)" -eq 0 ]; then
	as_root() { "$@"; }
elif command -v sudo >/dev/null 2>&1; then
	as_root() { sudo "$@"; }
else
	echo "deps: not root and no sudo: run as root: $how" >&2
	exit 1
fi
# Debian starts nginx's service on install; flimflam runs its own nginx
# instances and wants no system one holding port 80.
had_nginx=$(pgrep -x nginx)
case $pm in
apt)
	as_root apt-get update >/dev/null || { echo "deps: 'apt-get update' failed" >&2; exit 1; }
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@"
	;;
dnf)
	as_root dnf -y install "$@"
	;;
esac || { echo "deps: '$how' failed" >&2; exit 1; }
if [ -z "$had_nginx" ] && command -v systemctl >/dev/null 2>&1 &&
   systemctl is-active --quiet nginx 2>/dev/null; then
	as_root systemctl stop nginx >/dev/null 2>&1
fi
exit 0
