#!/usr/bin/env bash
# try-leifs.sh: build leifs, make a sample archive of generated kernel patch
# mail, and mount leifs over it: no network, no server.  A few views show
# the query language, one per family of prefixes, the floppy maintainer's
# query among them; each view's series/ holds its patch series as
# `b4 am` writes them.
#
#   examples/try-leifs.sh [MOUNTPOINT]          (default: ~/lore)
#
# Run as root on a fresh Debian 12 machine, it installs the build
# dependencies first.  Unmount with: fusermount3 -u MOUNTPOINT
# To search lore.kernel.org instead, mount with no source option:
#   ./leifs ~/lore
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
mnt=${1:-$HOME/lore}
work=${XDG_CACHE_HOME:-$HOME/.cache}/leifs-sample

if [ "$(id -u)" = 0 ] && ! pkg-config --exists fuse3 gmime-3.0 lmdb 2>/dev/null; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	apt-get install -y -q --no-install-recommends build-essential pkg-config \
		ca-certificates git curl python3 fuse3 libfuse3-dev libgmime-3.0-dev \
		libcurl4-openssl-dev libssl-dev liblmdb-dev zlib1g-dev libxapian-dev
fi
make -C "$here" -s leifs
# a sample from before it held series is made again
[ -s "$work/linux-rtc.mbox" ] && grep -q "^Subject: \[PATCH v2 0/" "$work/linux-rtc.mbox" ||
	"$here/examples/sample-archive.sh" "$work" >/dev/null

mkdir -p "$mnt"
mountpoint -q "$mnt" && fusermount3 -u "$mnt"
"$here/leifs" -o "source=$work/linux-rtc.mbox,source=$work/linux-watchdog.mbox,cache=$work/cache" "$mnt"
for q in \
	's:rtc AND f:belloni' \
	'dfn:drivers%2Frtc%2Frtc-pcf8563.c OR dfhh:pcf8563_*' \
	'b:oscillator AND NOT q:oscillator' \
	'd:2.weeks.ago..' \
	'(dfn:drivers%2Fblock%2Ffloppy.c OR dfhh:floppy_* OR s:floppy OR ((nq:bug OR nq:regression) AND nq:floppy)) AND rt:1.month.ago..'; do
	mkdir -p "$mnt/queries/$q"
	printf '%5d  %s\n' "$(ls "$mnt/queries/$q/cur" | wc -l)" "$q"
done
# every view's patch series, as b4 am would write them
series="$mnt/queries/s:rtc AND f:belloni/series"
first=$(ls "$series" | grep '^v2_' | head -n 1)
echo "series: $(ls "$series" | wc -l) in 's:rtc AND f:belloni', each ready for git am, e.g."
echo "  cat '$series/$first/info'; git am '$series/$first/am.mbx'"
echo "mounted at $mnt; try: mutt -f '$mnt/queries/s:rtc AND f:belloni'"
