#!/usr/bin/env bash
# try-leifs.sh: on a fresh Debian 12 machine, install what leifs needs, build
# it, serve a generated sample archive with a real public-inbox-httpd on
# 127.0.0.1 (no network needed), mount leifs over it and make a few views.
#
#   sudo examples/try-leifs.sh [MOUNTPOINT]     (default: ~/lore)
#
# Unmount with: fusermount3 -u MOUNTPOINT; stop the server with
#   kill "$(cat ~/.cache/leifs-sample/httpd.pid)"
# To search lore.kernel.org instead, mount with no source option:
#   ./leifs ~/lore
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
mnt=${1:-$HOME/lore}
work=${XDG_CACHE_HOME:-$HOME/.cache}/leifs-sample
port=${PORT:-18080}

if [ "$(id -u)" = 0 ]; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	apt-get install -y -q --no-install-recommends build-essential pkg-config \
		ca-certificates git curl python3 fuse3 libfuse3-dev libgmime-3.0-dev \
		libcurl4-openssl-dev libssl-dev liblmdb-dev zlib1g-dev libxapian-dev \
		public-inbox
fi
make -C "$here" -s

# the test harness's own functions build and serve the archive
TEST_DIR="$here/tests" TRASH="$work"
test_atexit() { :; }
test_wait_for() {
	local t=$1 i=0; shift
	while ! eval "$*"; do i=$((i + 1)); [ $i -lt $((t * 10)) ] || return 1; sleep 0.1; done
}
. "$here/tests/lib-pi.sh"
if [ ! -e "$work/.built" ]; then
	rm -rf "$work" && mkdir -p "$work"
	python3 "$here/tests/gen-mail.py" -n 120 "$work/mail"
	pi_build "$work/pi" "$work/mail"
	touch "$work/.built"
fi
pi_stop "$work"
pi_start "$work/pi" "$port" "$work"
url="http://127.0.0.1:$port/all/"
echo "public-inbox-httpd: $url"

mkdir -p "$mnt"
mountpoint -q "$mnt" && fusermount3 -u "$mnt"
"$here/leifs" -o "source=$url" "$mnt"
for q in 's:rtc' 'dfn:drivers%2Frtc%2Frtc-pcf8563.c' 'f:belloni' \
	 '(dfn:drivers%2Fblock%2Ffloppy.c OR dfhh:floppy_* OR s:floppy OR ((nq:bug OR nq:regression) AND nq:floppy)) AND rt:1.month.ago..'; do
	mkdir -p "$mnt/queries/$q"
	printf '%5d  %s\n' "$(ls "$mnt/queries/$q/cur" | wc -l)" "$q"
done
echo "mounted at $mnt; try: mutt -f '$mnt/queries/s:rtc'"
