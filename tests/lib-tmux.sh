# lib-tmux.sh: drive a terminal program headless in tmux, on a private
# socket (tmux_stop kills that server and so the program).
#   tmux_start NAME CMD       run CMD in a 160x50 window
#   tmux_keys NAME KEYS...    send-keys
#   tmux_screen NAME          the visible screen, as text
#   tmux_wait NAME REGEX [S]  wait up to S seconds (10) for REGEX on screen
TMUX_SOCK="$TRASH/tmux.sock"

tmux_start() {
	local name=$1
	shift
	[ -S "$TMUX_SOCK" ] || test_atexit "tmux_stop"
	tmux -S "$TMUX_SOCK" -f /dev/null new-session -d -s "$name" -x 160 -y 50 "$*"
}

tmux_keys() {
	local name=$1
	shift
	tmux -S "$TMUX_SOCK" send-keys -t "$name" "$@"
}

tmux_screen() {
	tmux -S "$TMUX_SOCK" capture-pane -p -t "$1" 2>/dev/null
}

tmux_wait() {
	local name=$1 re=$2 t=${3:-10} i=0
	while ! tmux_screen "$name" | grep -q -E -- "$re"; do
		i=$((i + 1))
		if [ $i -ge $((t * 10)) ]; then
			echo "tmux_wait: no /$re/ on the screen of $name:"
			tmux_screen "$name"
			return 1
		fi
		sleep 0.1
	done
}

tmux_gone() {
	! tmux -S "$TMUX_SOCK" has-session -t "$1" 2>/dev/null
}

tmux_stop() {
	tmux -S "$TMUX_SOCK" kill-server 2>/dev/null
	rm -f "$TMUX_SOCK"
	return 0
}
