#!/usr/bin/env bash
# seeds.sh DIR: a seed corpus per fuzz target in DIR/NAME/, from the test
# generator (realistic patch mail), the test queries and the sample config.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=$1
[ -e "$out/.done" ] && exit 0
rm -rf "$out"
mkdir -p "$out"/{mboxrd,gunzip,mail,query,config,terms} "$out/gen"
python3 "$here/../gen-mail.py" -s 7 -n 12 "$out/gen" >/dev/null
i=0
for f in "$out"/gen/*/*.eml; do
	i=$((i + 1))
	[ $i -le 60 ] && cp "$f" "$out/mail/$i.eml"
	[ $i -le 60 ] && cp "$f" "$out/terms/$i.eml"
done
# mboxrd streams of a few messages each, and their gzip
python3 - "$out" <<'PY'
import glob, gzip, os, re, sys
out = sys.argv[1]
files = sorted(glob.glob(os.path.join(out, "gen", "*", "*.eml")))
for n in range(0, min(len(files), 40), 4):
    body = b""
    for f in files[n:n + 4]:
        m = open(f, "rb").read()
        m = re.sub(rb"(?m)^(>*From )", rb">\1", m)
        body += b"From mboxrd@z Thu Jan  1 00:00:00 1970\n" + m + b"\n"
    open(os.path.join(out, "mboxrd", "%d" % n), "wb").write(b"\x07" + body)
    open(os.path.join(out, "gunzip", "%d.gz" % n), "wb").write(gzip.compress(body))
PY
# the view names of the lei battery, and a few hostile ones
grep -h -o "^[a-z]*:[^']*" "$here/../T200-lei.sh" 2>/dev/null | head -40 |
	while read -r q; do i=$((i + 1)); printf '%s' "$q" >"$out/query/$i"; done
printf '%s' 'dfn:drivers%2Fblock%2Ffloppy.c OR s:floppy' >"$out/query/floppy"
printf '%s' '(s:"a b" AND NOT f:x) OR rt:1.month.ago..' >"$out/query/bool"
cp "$here/../../examples/config" "$out/config/sample"
printf '[a "b"]\n\tk = "v \\" x" ; c\n\tbare\n' >"$out/config/quotes"
rm -rf "$out/gen"
touch "$out/.done"
