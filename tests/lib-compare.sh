# lib-compare.sh: one query through a leifs view and through lei q against
# the same server; the sets of blob ids must be equal.
#   compare_with_lei MOUNT URL QUERY [LEI_OPTS...]
# Leaves the count in $TRASH/last-count.  lei runs with --no-import-remote:
# it writes what the server sent, as leifs does (importing into its store
# takes it seconds per query, and may give a remote message the blob id of
# a copy the store holds: see T130).
view_name() {
	printf '%s' "$1" | sed -e 's/%/%25/g' -e 's#/#%2F#g'
}

compare_with_lei() {
	local m=$1 url=$2 q=$3 name out
	shift 3
	name=$(view_name "$q")
	out="$TRASH/lei-out/$(printf '%s' "$q" | git hash-object --stdin)"
	mkdir "$m/queries/$name" || return 1
	ls "$m/queries/$name/cur" >/dev/null || return 1
	grep -q '^state: fresh$' "$m/queries/$name/.status" ||
		{ cat "$m/queries/$name/.status"; return 1; }
	maildir_oids "$m/queries/$name" >leifs.oids
	rm -rf "$out"
	lei_q "$url" "$out" "$q" --no-import-remote "$@" 2>lei.err || { cat lei.err; return 1; }
	maildir_oids "$out" >lei.oids
	wc -l <leifs.oids >"$TRASH/last-count"
	check_oids "$m/queries/$name"/cur/* "$m/queries/$name"/new/* &&
	test_cmp lei.oids leifs.oids
}
