#!/usr/bin/env bash
# Editing a view's .config and .query with ordinary tools: vim (swap file,
# backup, :w twice with no "changed since reading" warning), sed -i (a
# temporary file renamed over the target), git config -f (a .lock file,
# chmod, rename), printf > and >>.  Each edit leaves the text as written,
# refuses a bad value with EINVAL as a write does, and leaves no stray
# file in the view.
. "$(dirname "$0")/test-lib.sh"
. "$TEST_DIR/lib-tmux.sh"

M="$TRASH/mnt"
V="$M/queries/s:edit"
python3 - >"$TRASH/list.mbox" <<'EOPY'
for i in range(6):
    print('From mboxrd@z Thu Jan  1 00:00:00 1970\n'
          'From: Someone <someone%d@example.org>\n'
          'Subject: edit %d\n'
          'Date: Thu, 01 Oct 2026 10:00:%02d +0000\n'
          'Message-ID: <edit-%d@example.org>\n\nbody %d\n' % (i, i, i, i, i))
EOPY
export HOME="$TRASH/home" XDG_CONFIG_HOME="$TRASH/home/.config"
mkdir -p "$HOME"
# the view holds its own files and nothing else
no_stray() {
	ls -A "$V" >files &&
	printf '%s\n' .config .query .refresh .status .unhide cur new series tmp >expect &&
	test_cmp expect files
}
# the key $1 of .config reads $2
has() { grep -qx "	$1 = $2" "$V/.config" || { cat "$V/.config"; return 1; }; }
mtime() { stat -c %y "$1"; }

test_expect_success 'leifs mounts a local mbox' '
	leifs_mount "$M" -o "source=$TRASH/list.mbox,cache=$TRASH/cache,refresh=3600" &&
	mkdir "$V" && [ "$(ls "$V/cur" | wc -l)" -eq 6 ]
'
test_expect_success 'stat twice with no write: the same mtime and ctime' '
	stat -c "%y %z %s" "$V/.config" "$V/.query" >one && sleep 0.2 &&
	cat "$V/.config" "$V/.query" >/dev/null &&
	stat -c "%y %z %s" "$V/.config" "$V/.query" >two && test_cmp one two
'
test_expect_success 'a write moves the mtime; reading back, applying do not' '
	before=$(mtime "$V/.config") &&
	printf "[leifs]\n\tlimit = 5\n" >"$V/.config" && has limit 5 &&
	after=$(mtime "$V/.config") && [ "$before" != "$after" ] &&
	sleep 1 && cat "$V/.config" >/dev/null && [ "$(mtime "$V/.config")" = "$after" ] &&
	q=$(mtime "$V/.query") && sleep 0.1 && printf "s:edit\n" >"$V/.query" &&
	q2=$(mtime "$V/.query") && [ "$q2" != "$q" ] &&
	sleep 0.2 && [ "$(mtime "$V/.query")" = "$q2" ]
'
test_expect_success 'printf >: the file is the text written, other keys back to defaults' '
	printf "[leifs]\n\tthreads = true\n\tlimit = 4\n" >"$V/.config" &&
	has threads true && has limit 4 &&
	printf "[leifs]\n\trefresh = 60\n" >"$V/.config" &&
	has refresh 60 && has threads false && has limit 0
'
test_expect_success '>> appends: the keys already there stay' '
	printf "[leifs]\n\tthreads = true\n\tlimit = 4\n" >"$V/.config" &&
	printf "\trefresh = 60\n" >>"$V/.config" &&
	has threads true && has limit 4 && has refresh 60 && no_stray
'
test_expect_success 'git config -f sets a key and reads it back, the rest kept' '
	git config -f "$V/.config" leifs.limit 3 &&
	[ "$(git config -f "$V/.config" leifs.limit)" = 3 ] &&
	has limit 3 && has threads true && has refresh 60 && no_stray &&
	sleep 1 && ! grep -q "^refused:" "$V/.status" &&
	test_wait_for 20 "[ \"\$(ls \"$V/cur\" \"$V/new\" | grep -c leifs)\" -eq 3 ]"
'
test_expect_success 'git config -f with a bad value: refused, nothing changed' '
	! git config -f "$V/.config" leifs.limit many 2>err && cat err &&
	has limit 3 && grep -q "^refused:.*limit" "$V/.status" && no_stray
'
test_expect_success 'sed -i on .config and .query' '
	sed -i "s/limit = 3/limit = 2/" "$V/.config" && has limit 2 && has threads true &&
	sed -i "s/s:edit/s:edit OR s:body/" "$V/.query" &&
	echo "s:edit OR s:body" >expect && test_cmp expect "$V/.query" && no_stray
'
test_expect_success 'sed -i with a bad value: refused, nothing changed' '
	! sed -i "s/limit = 2/limit = -1/" "$V/.config" 2>err && cat err &&
	has limit 2 && grep -q "^refused:" "$V/.status" && no_stray
'

# vim as a user runs it: defaults.vim, its swap file and the backup it
# writes while it saves in the view (directory and backupdir begin with
# "."), :w twice then :wq
if ! command -v vim >/dev/null; then
	test_skip 'vim edits .config' 'no vim on this machine'
else
	test_expect_success 'vim: two :w and :wq, no warning, the text as written' '
		tmux_start vim "vim -u DEFAULTS -N \"$V/.config\"" &&
		tmux_wait vim "limit = 2" &&
		test_wait_for 10 "ls -A \"$V\" | grep -qx .config.swp" &&
		tmux_keys vim ":%s/limit = 2/limit = 1/" Enter ":w" Enter &&
		tmux_wait vim "written" && has limit 1 && sleep 1.2 &&
		tmux_keys vim ":%s/refresh = 60/refresh = 70/" Enter ":w" Enter &&
		tmux_wait vim "refresh = 70" && sleep 0.5 && tmux_screen vim >screen &&
		! grep -E "changed since reading|E[0-9]+:" screen &&
		tmux_keys vim ":wq" Enter && test_wait_for 10 tmux_gone vim &&
		has limit 1 && has refresh 70 && has threads true && no_stray
	'
	test_expect_success 'vim -es with default swap and backup: :wq' '
		vim -u NONE -N -es -c "%s/limit = 1/limit = 2/" -c wq "$V/.config" &&
		has limit 2 && no_stray
	'
	test_expect_success 'vim with set backup: the backup stays, holds the old text' '
		cat "$V/.config" >old &&
		vim -u NONE -N -es -c "set backup backupskip=" -c "%s/limit = 2/limit = 1/" -c wq "$V/.config" &&
		has limit 1 && test_cmp old "$V/.config~" && rm "$V/.config~" && no_stray
	'
fi
test_expect_success 'perl -i (a temporary file of eight letters, renamed over)' '
	perl -i -pe "s/limit = 1/limit = 3/" "$V/.config" && has limit 3 && has threads true &&
	perl -i -pe "s/ OR s:body//" "$V/.query" &&
	echo "s:edit" >expect && test_cmp expect "$V/.query" && no_stray
'
test_expect_success 'perl -i with a bad value: refused, nothing changed' '
	! perl -i -pe "s/limit = 3/limit = -1/" "$V/.config" 2>err; cat err &&
	has limit 3 && grep -q "^refused:" "$V/.status" && no_stray
'
test_expect_success 'python: a NamedTemporaryFile beside it, os.replace over it' '
	python3 -c "
import os, sys, tempfile
path = sys.argv[1]
text = open(path).read().replace(\"limit = 3\", \"limit = 4\")
with tempfile.NamedTemporaryFile(\"w\", dir=os.path.dirname(path), delete=False) as f:
    f.write(text)
os.replace(f.name, path)
" "$V/.config" && has limit 4 && has threads true && no_stray
'
test_expect_success 'ed: w writes the file in place' '
	printf "%s\n" ",s/limit = 4/limit = 1/" w q | ed -s "$V/.config" &&
	has limit 1 && has threads true && no_stray
'
# emacs as a user runs it: it saves by renaming the file to its backup,
# which leifs refuses (.config is the view's), so it says "Cannot write
# backup file", keeps the backup in ~/.emacs.d and writes the file in
# place; with backup-by-copying the backup is a client file of the view.
# Both editors skip backups of files under /tmp by default (backupskip,
# backup-enable-predicate), and a clone of the project may live there.
if ! command -v emacs >/dev/null; then
	test_skip 'emacs edits .config' 'no emacs on this machine'
else
	emacs_edit() {  # emacs_edit FROM TO [LISP]: replace, save, exit
		emacs -Q --batch --eval "(setq backup-enable-predicate (lambda (f) t))" \
			"$V/.config" --eval "(progn ${3:-} (goto-char (point-min))
			(re-search-forward \"$1\") (replace-match \"$2\") (save-buffer))"
	}
	test_expect_success 'emacs: save with its default backup, the text as written' '
		mkdir -p "$HOME/.emacs.d" && emacs_edit "limit = 1" "limit = 2" 2>err; cat err &&
		has limit 2 && has threads true && no_stray && grep -q "limit = 1" "$HOME/.emacs.d/%backup%~"
	'
	test_expect_success 'emacs with backup-by-copying: the backup is a file of the view' '
		cat "$V/.config" >old &&
		emacs_edit "limit = 2" "limit = 1" "(setq backup-by-copying t)" &&
		has limit 1 && test_cmp old "$V/.config~" && rm "$V/.config~" && no_stray
	'
fi
test_expect_success 'a refused rewrite does not cancel the good one just before it' '
	printf "[leifs]\n\tlimit = 5\n" >"$V/.config" &&
	! printf "[leifs]\n\tlimit = x\n" >"$V/.config" && sleep 1 &&
	has limit 5 && ! git config -f "$V/.config" leifs.limit y && sleep 1 && has limit 5
'
test_expect_success 'removing a client file frees its slot' '
	for i in $(seq 20); do
		git config -f "$V/.config" leifs.refresh $((100 + i)) || return 1
	done &&
	has refresh 120 && no_stray
'
test_done
