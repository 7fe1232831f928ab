# lib-conform.sh: one query through a leifs view over a local archive and
# through public-inbox-httpd over the same mail; the sets of blob ids
# must be equal.
#   conform MOUNT INBOX_URL QUERY    leaves the count in $TRASH/last-count
#   server_oids INBOX_URL QUERY      the server's answer, sorted blob ids
server_oids() {
	local url=$1 q=$2 code
	code=$(curl -s -o "$TRASH/answer.gz" -w '%{http_code}' -X POST -G \
		--data-urlencode "q=$q" -d x=m "$url") || return 1
	case $code in
	404) : ;;
	200) gzip -dc "$TRASH/answer.gz" | python3 "$TEST_DIR/mbox-oids.py" ;;
	*) echo "server answered $code" >&2; return 1 ;;
	esac | sort
}

# blob ids of a leifs view, from the file names
view_oids() {
	ls "$1/cur" "$1/new" | sed -n 's/^[0-9]*\.\([0-9a-f]\{40\}\)\.leifs.*/\1/p' | sort
}

conform() {
	local m=$1 url=$2 q=$3 name
	name=$(printf '%s' "$q" | sed -e 's/%/%25/g' -e 's#/#%2F#g')
	mkdir "$m/queries/$name" || return 1
	ls "$m/queries/$name/cur" >/dev/null || return 1
	grep -q '^state: fresh$' "$m/queries/$name/.status" ||
		{ cat "$m/queries/$name/.status"; return 1; }
	view_oids "$m/queries/$name" >leifs.oids
	server_oids "$url" "$q" >server.oids || return 1
	wc -l <server.oids >"$TRASH/last-count"
	test_cmp server.oids leifs.oids
}
