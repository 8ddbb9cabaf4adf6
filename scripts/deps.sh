#!/bin/sh
# scripts/deps.sh - install the Debian packages spent builds and tests with (idempotent, run as root).
# Only what is missing is installed, so a second run costs one dpkg query.
set -eu

# tmux drives spent top's terminal in e2e/top.sh; man-db renders and systemd (systemd-analyze) checks what make install ships (e2e/install.sh);
# chromium (headless) loads the page of report --html (e2e/report_html.sh)
PKGS="make gcc g++ clang llvm lld pkg-config
libpfm4-dev libdw-dev libelf-dev elfutils libbpf-dev bpftool libzydis-dev libunicorn-dev
libzstd-dev liblz4-dev zlib1g-dev libpng-dev libcmocka-dev libclang-rt-14-dev libiberty-dev
linux-perf valgrind binutils file procps python3 golang-go bc
sqlite3 zstd xz-utils bzip2 gzip openssl diffutils findutils tar perl
man-db systemd tmux chromium"

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
		missing="$missing $p"
	fi
done

if [ -z "$missing" ]; then
	exit 0
fi

if [ "$(id -u)" != 0 ]; then
	echo "deps: missing Debian packages:$missing (run 'sudo scripts/deps.sh')" >&2
	exit 1
fi

echo "deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
