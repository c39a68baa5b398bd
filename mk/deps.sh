#!/bin/sh
# Installs the system packages flimflam builds with, runs, and tests with,
# when any is missing: apt-get on Debian and Ubuntu, dnf on Fedora. Does
# nothing when all are present. Without root it uses sudo where there is
# one; otherwise it prints the exact command and fails.

debian_pkgs="gcc make pkg-config libpipeline-dev libjansson-dev jq
linux-perf iperf3 nghttp2-client nghttp2-server nghttp2-proxy
nginx libnginx-mod-stream bats bats-assert bats-support chromium procps sockperf"
fedora_pkgs="gcc make pkgconf-pkg-config libpipeline-devel jansson-devel jq
perf iperf3 nghttp2 nginx nginx-mod-stream bats chromium procps-ng sockperf"

# Ubuntu packages perf per kernel, as linux-tools-RELEASE (the same names
# ff-check suggests).
os_id=$( (. /etc/os-release || . /usr/lib/os-release) 2>/dev/null; echo "${ID:-}")
if [ "$os_id" = ubuntu ]; then
	debian_pkgs=$(echo "$debian_pkgs" |
		sed "s/linux-perf/linux-tools-common linux-tools-$(uname -r)/")
fi

if command -v apt-get >/dev/null 2>&1 && command -v dpkg-query >/dev/null 2>&1; then
	missing=
	for p in $debian_pkgs; do
		s=$(dpkg-query -W -f '${Status}' "$p" 2>/dev/null)
		case $s in *" installed") ;; *) missing="$missing $p" ;; esac
	done
	[ -z "$missing" ] && exit 0
	update="apt-get update"
	install="env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends$missing"
elif command -v dnf >/dev/null 2>&1; then
	missing=
	for p in $fedora_pkgs; do
		rpm -q "$p" >/dev/null 2>&1 || missing="$missing $p"
	done
	[ -z "$missing" ] && exit 0
	update=
	install="dnf -y install$missing"
else
	echo "deps: neither apt-get nor dnf found: install by hand: $debian_pkgs" >&2
	exit 1
fi

echo "deps: installing:$missing" >&2
if [ "$(id -u)" -eq 0 ]; then
	sudo=
elif command -v sudo >/dev/null 2>&1; then
	sudo=sudo
else
	echo "deps: not root and no sudo: run as root: ${update:+$update && }$install" >&2
	exit 1
fi
if [ -n "$update" ]; then
	$sudo $update >/dev/null || { echo "deps: '$update' failed" >&2; exit 1; }
fi
# Debian starts nginx's service on install; flimflam runs its own nginx
# instances and wants no system one holding port 80.
had_nginx=$(pgrep -x nginx)
$sudo $install || { echo "deps: '$install' failed" >&2; exit 1; }
if [ -z "$had_nginx" ] && command -v systemctl >/dev/null 2>&1 &&
   systemctl is-active --quiet nginx 2>/dev/null; then
	$sudo systemctl stop nginx >/dev/null 2>&1
fi
exit 0
