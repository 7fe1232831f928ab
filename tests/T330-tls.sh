#!/usr/bin/env bash
# TLS is verified by default: a server with a self-signed certificate is
# refused (and .status says why) until -o cafile= names its certificate;
# -o insecure is the explicit way around.
. "$(dirname "$0")/test-lib.sh"

if ! command -v openssl >/dev/null; then
	test_skip 'HTTPS with a self-signed certificate' 'openssl is not installed'
	test_done
	exit
fi
test_expect_success 'a self-signed certificate for 127.0.0.1' '
	openssl req -x509 -newkey rsa:2048 -nodes -keyout key.pem -out cert.pem -days 2 \
		-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 2>/dev/null &&
	openssl req -x509 -newkey rsa:2048 -nodes -keyout other-key.pem -out other.pem -days 2 \
		-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 2>/dev/null
'
hostile_start "$TRASH/cert.pem" "$TRASH/key.pem"
HP=${H##*:}
M="$TRASH/mnt"

test_expect_success 'the server speaks HTTPS (curl with the certificate)' '
	test_wait_for 10 "curl -s --cacert cert.pem -o /dev/null -d \"\" $H/ok/" &&
	! curl -s -o /dev/null -d "" "$H/ok/"
'
test_expect_success 'by default the certificate is refused; .status says why' '
	leifs_mount "$M" -o "source=$H/ok/,cache=$TRASH/c1,timeout=5" &&
	mkdir "$M/queries/s:tls" && [ -z "$(ls "$M/queries/s:tls/cur")" ] &&
	test_wait_for 10 "grep -q \"^state: failed\" \"$M/queries/s:tls/.status\"" &&
	grep -i "^error: .*certificate" "$M/queries/s:tls/.status" &&
	leifs_umount "$M"
'
test_expect_success 'another CA in cafile= is refused too' '
	leifs_mount "$M" -o "source=$H/ok/,cache=$TRASH/c2,timeout=5,cafile=$TRASH/other.pem" &&
	mkdir "$M/queries/s:tls" && [ -z "$(ls "$M/queries/s:tls/cur")" ] &&
	test_wait_for 10 "grep -q \"^state: failed\" \"$M/queries/s:tls/.status\"" &&
	leifs_umount "$M"
'
test_expect_success 'cafile= with its certificate: the view fills' '
	leifs_mount "$M" -o "source=$H/ok/,cache=$TRASH/c3,timeout=5,cafile=$TRASH/cert.pem" &&
	mkdir "$M/queries/s:tls" && [ "$(ls "$M/queries/s:tls/cur" | wc -l)" -eq 2 ] &&
	grep -q "^state: fresh" "$M/queries/s:tls/.status" && check_oids "$M/queries/s:tls"/cur/* &&
	leifs_umount "$M"
'
test_expect_success 'insecure: filled without verification, as asked' '
	leifs_mount "$M" -o "source=$H/ok/,cache=$TRASH/c4,timeout=5,insecure" &&
	mkdir "$M/queries/s:tls" && [ "$(ls "$M/queries/s:tls/cur" | wc -l)" -eq 2 ] &&
	leifs_umount "$M"
'
test_expect_success 'cafile= from the config file; a password in the URL is never shown' '
	mkdir -p xdg/leifs && printf "[leifs]\n\tcafile = %s\n" "$TRASH/cert.pem" >xdg/leifs/config &&
	XDG_CONFIG_HOME="$TRASH/xdg" leifs_mount "$M" \
		-o "source=https://me:hunter2@127.0.0.1:$HP/ok/,cache=$TRASH/c5,timeout=5" &&
	mkdir "$M/queries/s:tls" && [ "$(ls "$M/queries/s:tls/cur" | wc -l)" -eq 2 ] &&
	! grep -r hunter2 "$M/queries/.status" "$M/queries/s:tls/.status" "$TRASH/leifs.log" &&
	leifs_umount "$M"
'
test_expect_success 'the mount is private: no allow_other, default_permissions' '
	leifs_mount "$M" -o "source=$H/ok/,cache=$TRASH/c6" &&
	grep " $M " /proc/mounts >mounts && cat mounts && grep -q "default_permissions" mounts &&
	! grep -q "allow_other" mounts && [ "$(stat -c %a "$TRASH/c6/lmdb/data.mdb")" = 600 ]
'
test_done
