# lib-gen.sh: the generated test archive, built once per run (under a
# lock: files run in parallel) and shared.
#   gen_server: build (if needed) and start a public-inbox-httpd over the
#   generated mail; sets PI_WORK, PI_PORT and PI_URL (the /all/ endpoint).
. "$TEST_DIR/lib-pi.sh"

GEN_WORK="$TEST_DIR/trash/pi-gen"

gen_build() {
	[ -e "$GEN_WORK/.built" ] && return 0
	rm -rf "$GEN_WORK"
	mkdir -p "$GEN_WORK"
	python3 "$TEST_DIR/gen-mail.py" -s 1 -n 80 "$GEN_WORK/mail" >/dev/null &&
	pi_build "$GEN_WORK/pi" "$GEN_WORK/mail" &&
	touch "$GEN_WORK/.built"
}

gen_server() {
	fixture_lock pi-gen gen_build || return 1
	# shared read-only; tests that deliver more mail build their own
	PI_WORK="$GEN_WORK/pi"
	PI_PORT=$(free_port)
	mkdir -p "$TRASH/httpd"
	pi_start "$PI_WORK" "$PI_PORT" "$TRASH/httpd" || return 1
	PI_URL="http://127.0.0.1:$PI_PORT/all/"
}
