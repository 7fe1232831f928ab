#!/usr/bin/env bash
# Local archives are data, never code (issue #14): nothing in a
# public-inbox inbox (its git config included) makes leifs run a program,
# an inbox another user owns is refused, a FIFO or device as a source is
# refused at once (never a daemon stuck in open()), and a typed source that
# is not what its type says is reported as such, not as "ok, 0 messages".
. "$(dirname "$0")/test-lib.sh"

# a v2 inbox of three messages, made as public-inbox lays it out
mkdir -p "$TRASH/eml"
for i in 1 2 3; do
	cat >"$TRASH/eml/$i.eml" <<EOF
From: Tester <tester@leifs.test>
To: list@leifs.test
Subject: trust message $i
Date: Mon, 2 Jan 2023 10:0$i:00 +0000
Message-ID: <trust-$i@leifs.test>

body $i
EOF
done
# make_inbox DIR: the inbox, with a hostile config and a signed commit
make_inbox() {
	local d=$1 g=$1/git/0.git tree blob head c
	mkdir -p "$d/git" &&
	python3 "$TEST_DIR/pi-import.py" "$g" "$TRASH"/eml/*.eml &&
	# a fourth message in a commit with a gpgsig header
	blob=$(sed -e 's/trust message 3/trust message 4/' -e 's/trust-3@/trust-4@/' \
		"$TRASH/eml/3.eml" | git --git-dir="$g" hash-object -w --stdin) &&
	tree=$(printf '100644 blob %s\tm\n' "$blob" | git --git-dir="$g" mktree) &&
	head=$(git --git-dir="$g" rev-parse HEAD) &&
	c=$(printf '%s\n' "tree $tree" "parent $head" \
		"author T <t@leifs.test> 1672653900 +0000" \
		"committer T <t@leifs.test> 1672653900 +0000" \
		"gpgsig -----BEGIN PGP SIGNATURE-----" \
		" " \
		" iQEzBAABCAAdFiEEAAAAAAAAAAAAAAAAAAAAAAAAAAAFAmOy" \
		" -----END PGP SIGNATURE-----" \
		"" "m" | git --git-dir="$g" hash-object -t commit -w --literally --stdin) &&
	git --git-dir="$g" update-ref HEAD "$c" &&
	# every key that could run a program when git reads this repository
	for k in gpg.program gpg.openpgp.program gpg.x509.program gpg.ssh.program \
		core.fsmonitor core.pager pager.log pager.rev-list pager.diff-tree \
		pager.cat-file diff.external diff.m.textconv diff.m.command \
		core.sshCommand core.alternateRefsCommand; do
		git --git-dir="$g" config "$k" "$TRASH/evil" || return 1
	done &&
	git --git-dir="$g" config log.showSignature true &&
	git --git-dir="$g" config core.hooksPath "$TRASH" &&
	echo "m diff=m" >"$g/info/attributes"
}
cat >"$TRASH/evil" <<EOF
#!/bin/sh
echo "\$0 \$*" >>"$TRASH/ran"
EOF
chmod +x "$TRASH/evil"

test_expect_success 'the hostile inbox runs its program under git log (the attack)' '
	make_inbox "$TRASH/inbox" &&
	git --git-dir="$TRASH/inbox/git/0.git" log --raw HEAD >/dev/null 2>&1;
	[ -f "$TRASH/ran" ] && rm -f "$TRASH/ran"
'

M="$TRASH/mnt"
test_expect_success 'leifs mounts the hostile inbox' '
	leifs_mount "$M" -o "source=$TRASH/inbox,cache=$TRASH/cache"
'
test_expect_success 'the inbox is read and nothing in its config runs' '
	v="$M/queries/s:trust" && mkdir "$v" && ls "$v/cur" >/dev/null &&
	test_wait_for 20 "grep -q \"^source: $TRASH/inbox: ok, 4 messages\" \"$v/.status\"" &&
	ls "$v/cur" | grep -c leifs >count && echo 4 >expect && test_cmp expect count &&
	grep -l "trust message 4" "$v"/cur/* &&
	check_oids "$v"/cur/* &&
	[ ! -e "$TRASH/ran" ]
'
test_expect_success 'a refresh after the inbox grew reads only the new message, still running nothing' '
	g="$TRASH/inbox/git/0.git" && head=$(git --git-dir="$g" rev-parse HEAD) &&
	blob=$(sed -e "s/trust message 3/trust message 5/" -e "s/trust-3@/trust-5@/" \
		"$TRASH/eml/3.eml" | git --git-dir="$g" hash-object -w --stdin) &&
	tree=$(printf "100644 blob %s\tm\n" "$blob" | git --git-dir="$g" mktree) &&
	c=$(echo m | git --git-dir="$g" -c core.hooksPath=/nonexistent commit-tree "$tree" -p "$head") &&
	git --git-dir="$g" update-ref HEAD "$c" &&
	v="$M/queries/s:trust" && touch "$v/.refresh" &&
	test_wait_for 20 "grep -q \"^source: $TRASH/inbox: ok, 1 messages, 1 new in the archive\" \"$v/.status\"" &&
	ls "$v/new" | grep -c leifs >count && echo 1 >expect && test_cmp expect count &&
	[ ! -e "$TRASH/ran" ]
'
test_expect_success 'the same inbox typed v1: (an epoch as a v1 repository, a path with ":") runs nothing' '
	mkdir "$TRASH/a:b c" && cp -a "$TRASH/inbox/git/0.git" "$TRASH/a:b c/" &&
	v="$M/queries/s:trust AND s:message" && mkdir "$v" && ls "$v/cur" >/dev/null &&
	printf "[leifs]\n\tsource = v1:%s\n" "$TRASH/a:b c/0.git" >"$v/.config" &&
	test_wait_for 20 "grep -q \"^source: v1:$TRASH/a:b c/0.git: ok, 5 messages\" \"$v/.status\"" &&
	[ ! -e "$TRASH/ran" ]
'

# HEAD is read by leifs, not by git: packed refs are found, names that
# leave refs/ and refs that are symbolic links are refused
test_expect_success 'an inbox whose refs are packed is read' '
	cp -a "$TRASH/inbox" "$TRASH/packed" &&
	git --git-dir="$TRASH/packed/git/0.git" pack-refs --all &&
	[ ! -e "$TRASH/packed/git/0.git/refs/heads/master" ] &&
	v="$M/queries/s:trust AND NOT s:nothing" && mkdir "$v" && ls "$v/cur" >/dev/null &&
	printf "[leifs]\n\tsource = v2:%s\n" "$TRASH/packed" >"$v/.config" &&
	test_wait_for 20 "grep -q \"^source: v2:$TRASH/packed: ok, 5 messages, 5 new\" \"$v/.status\"" &&
	[ ! -e "$TRASH/ran" ]
'
test_expect_success 'a HEAD naming a ref outside refs/ is refused' '
	cp -a "$TRASH/inbox" "$TRASH/badhead" &&
	echo "ref: refs/../../../../etc/passwd" >"$TRASH/badhead/git/0.git/HEAD" &&
	v="$M/queries/s:trust AND NOT s:nothing2" && mkdir "$v" && ls "$v/cur" >/dev/null &&
	printf "[leifs]\n\tsource = v2:%s\n" "$TRASH/badhead" >"$v/.config" &&
	test_wait_for 20 "grep -q \"^source: v2:$TRASH/badhead: failed: .*HEAD is not a commit id or a ref\" \"$v/.status\""
'
test_expect_success 'a ref that is a symbolic link is not followed' '
	cp -a "$TRASH/inbox" "$TRASH/symref" &&
	r="$TRASH/symref/git/0.git/refs/heads/master" &&
	cp "$r" "$TRASH/elsewhere" && rm "$r" && ln -s "$TRASH/elsewhere" "$r" &&
	v="$M/queries/s:trust AND NOT s:nothing3" && mkdir "$v" && ls "$v/cur" >/dev/null &&
	printf "[leifs]\n\tsource = v2:%s\n" "$TRASH/symref" >"$v/.config" &&
	test_wait_for 20 "grep -q \"^source: v2:$TRASH/symref: failed: cannot read .*refs/heads/master: Too many levels of symbolic links\" \"$v/.status\""
'

# nothing leads leifs outside the archive: alternates elsewhere, a
# symlinked epoch, a maildir whose cur/ is a link
test_expect_success 'an epoch whose alternates lead outside the inbox is refused' '
	make_inbox "$TRASH/secret" &&
	cp -a "$TRASH/inbox" "$TRASH/alt" &&
	echo "$TRASH/secret/git/0.git/objects" >"$TRASH/alt/git/0.git/objects/info/alternates" &&
	v="$M/queries/s:trust AND NOT s:nothing4" && mkdir "$v" && ls "$v/cur" >/dev/null &&
	printf "[leifs]\n\tsource = v2:%s\n" "$TRASH/alt" >"$v/.config" &&
	test_wait_for 20 "grep -q \"^source: v2:$TRASH/alt: failed: .*alternates names objects outside the archive\" \"$v/.status\""
'
test_expect_success 'alternates inside the inbox are followed' '
	cp -a "$TRASH/inbox" "$TRASH/altin" &&
	git init -q --bare "$TRASH/altin/git/shared.git" &&
	echo "../../shared.git/objects" >"$TRASH/altin/git/0.git/objects/info/alternates" &&
	v="$M/queries/s:trust AND NOT s:nothing5" && mkdir "$v" && ls "$v/cur" >/dev/null &&
	printf "[leifs]\n\tsource = v2:%s\n" "$TRASH/altin" >"$v/.config" &&
	test_wait_for 20 "grep -q \"^source: v2:$TRASH/altin: ok, 5 messages\" \"$v/.status\""
'
test_expect_success 'an epoch that is a symbolic link is refused' '
	mkdir -p "$TRASH/linked/git" && ln -s "$TRASH/secret/git/0.git" "$TRASH/linked/git/0.git" &&
	v="$M/queries/s:trust AND NOT s:nothing6" && mkdir "$v" && ls "$v/cur" >/dev/null &&
	printf "[leifs]\n\tsource = v2:%s\n" "$TRASH/linked" >"$v/.config" &&
	test_wait_for 20 "grep -q \"^source: v2:$TRASH/linked: failed: .*0.git is a symbolic link: refused\" \"$v/.status\""
'
test_expect_success 'a maildir whose cur/ is a symbolic link is refused' '
	mkdir -p "$TRASH/md/new" "$TRASH/secretdir" && cp "$TRASH/eml/1.eml" "$TRASH/secretdir/1" &&
	ln -s "$TRASH/secretdir" "$TRASH/md/cur" &&
	v="$M/queries/s:trust AND NOT s:nothing7" && mkdir "$v" && ls "$v/cur" >/dev/null &&
	printf "[leifs]\n\tsource = maildir:%s\n" "$TRASH/md" >"$v/.config" &&
	test_wait_for 20 "grep -q \"^source: maildir:$TRASH/md: failed: .*cur is a symbolic link: refused\" \"$v/.status\""
'

# ---- ownership ----
# a mount of its own: a view's first fill would come from $M's inbox
M3="$TRASH/mnt3"
ME=$(id -u) NOBODY=$(id -u nobody)
if [ "$ME" != 0 ]; then
	test_skip 'an inbox another user owns is refused' 'chown needs root'
else
test_expect_success 'an inbox another user owns, or one of its epochs, is refused' '
	make_inbox "$TRASH/theirs" && chown -R nobody "$TRASH/theirs" &&
	make_inbox "$TRASH/mixed" && chown -R nobody "$TRASH/mixed/git/0.git" &&
	leifs_mount "$M3" -o "source=$TRASH/theirs,source=v2:$TRASH/mixed,cache=$TRASH/cache3" &&
	v="$M3/queries/s:message" && mkdir "$v" && ls "$v/cur" >/dev/null &&
	test_wait_for 20 "grep -q \"^source: $TRASH/theirs: failed: $TRASH/theirs is owned by uid $NOBODY, not by uid $ME or root\" \"$v/.status\"" &&
	grep "^source: v2:$TRASH/mixed: failed: $TRASH/mixed/git/0.git is owned by uid $NOBODY" "$v/.status" &&
	grep "^messages: 0" "$v/.status" &&
	! ls "$v/cur" "$v/new" | grep -q leifs &&
	[ ! -e "$TRASH/ran" ]
'
fi

# ---- FIFOs and devices ----
mkfifo "$TRASH/fifo"
n=0
for pfx in "" mboxrd: mboxo: maildir: v1: v2: /dev/null; do
	n=$((n + 1))
	case $pfx in
	/dev/null) src=/dev/null ;;
	*) src="$pfx$TRASH/fifo" ;;
	esac
	test_expect_success "source \"$src\" is refused at once" '
		v="$M/queries/s:fifo$n" && mkdir "$v" && ls "$v/cur" >/dev/null &&
		printf "[leifs]\n\tsource = %s\n" "$src" >"$v/.config" &&
		test_wait_for 5 "grep -q \"^source: $src: failed: .*not a regular file or a directory\" \"$v/.status\"" ||
		{ cat "$v/.status"; false; }
	'
done
test_expect_success 'unmount is clean after the FIFO sources: the daemon exits' '
	pid=$(cat "$M.pid") && fusermount3 -u -z "$M" &&
	test_wait_for 10 "! kill -0 $pid 2>/dev/null"
'

# ---- what a typed source is not ----
M2="$TRASH/mnt2"
mkdir -p "$TRASH/plain/sub"
test_expect_success 'leifs mounts an mbox for the typed-source checks' '
	printf "From x Thu Jan  1 00:00:00 1970\n" >"$TRASH/one.mbox" &&
	cat "$TRASH/eml/1.eml" >>"$TRASH/one.mbox" &&
	leifs_mount "$M2" -o "source=$TRASH/one.mbox,cache=$TRASH/cache2"
'
n=0
while IFS='|' read -r src why; do
	n=$((n + 1))
	test_expect_success "$src says what it is not" '
		v="$M2/queries/s:typed$n" && mkdir "$v" && ls "$v/cur" >/dev/null &&
		printf "[leifs]\n\tsource = %s\n" "$src" >"$v/.config" &&
		test_wait_for 10 "grep -qF \"source: $src: failed: $why\" \"$v/.status\"" ||
		{ cat "$v/.status"; false; }
	'
done <<EOT
v1:/etc|/etc is not a public-inbox v1 repository (no objects/ and refs/)
v2:$TRASH/plain|$TRASH/plain is not a public-inbox v2 inbox (no git/0.git)
maildir:$TRASH/plain|$TRASH/plain is not a maildir (no cur/ and new/)
mboxrd:$TRASH/plain|$TRASH/plain is not an mbox (a directory)
EOT
test_done
