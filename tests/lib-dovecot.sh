# lib-dovecot.sh: a Dovecot IMAP server on 127.0.0.1 for one test, with one
# user and a plain password; its mail belongs to `nobody` (Dovecot refuses
# to serve mail as root).
#   dovecot_start DIR PORT USER PASS [TLSPORT CERT KEY]: start it (with
#   TLSPORT, imaps too, on that port with that certificate); dovecot_stop
#   DIR: stop it (registered with test_atexit by dovecot_start).

dovecot_start() {
	local d=$1 port=$2 user=$3 pass=$4 tlsport=${5:-0} ssl=no tls=
	if [ "$tlsport" != 0 ]; then
		ssl=yes
		tls="ssl_cert = <$6
ssl_key = <$7"
	fi
	mkdir -p "$d/run" "$d/home/$user" &&
	chown -R nobody:nogroup "$d/home" &&
	printf '%s:{PLAIN}%s\n' "$user" "$pass" >"$d/passwd" &&
	cat >"$d/dovecot.conf" <<EOC &&
protocols = imap
listen = 127.0.0.1
base_dir = $d/run
state_dir = $d/run
log_path = $d/dovecot.log
ssl = $ssl
$tls
disable_plaintext_auth = no
auth_mechanisms = plain login
default_login_user = dovenull
default_internal_user = dovecot
first_valid_uid = 1
mail_location = maildir:~/Maildir
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u $d/passwd
}
userdb {
  driver = static
  args = uid=nobody gid=nogroup home=$d/home/%u
}
service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = $port
  }
  inet_listener imaps {
    address = 127.0.0.1
    port = $tlsport
  }
}
service pop3-login {
  inet_listener pop3 {
    port = 0
  }
}
service submission-login {
  inet_listener submission {
    port = 0
  }
}
EOC
	chmod 755 "$d" "$d/run" &&
	test_atexit "dovecot_stop '$d'" &&
	dovecot -c "$d/dovecot.conf" || return 1
	test_wait_for 10 "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", $port), 1)' 2>/dev/null"
}

dovecot_stop() {
	[ -f "$1/dovecot.conf" ] || return 0
	doveadm -c "$1/dovecot.conf" stop 2>/dev/null
	test_wait_for 10 "! [ -e '$1/run/master.pid' ]" ||
		kill -9 "$(cat "$1/run/master.pid" 2>/dev/null)" 2>/dev/null
	return 0
}
