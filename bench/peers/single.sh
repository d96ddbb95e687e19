#!/usr/bin/env bash
# Single-server baselines for `certa bench`: one MariaDB and one PostgreSQL.
#
#   bench/peers/single.sh install          # apt-get: mariadb-server, postgresql
#   bench/peers/single.sh start mariadb    # MySQL protocol on 127.0.0.1:13406
#   bench/peers/single.sh start postgres   # PostgreSQL protocol on 127.0.0.1:15432
#   bench/peers/single.sh stop mariadb|postgres
#
# Durability as certa's: every commit is fsync'd (MariaDB innodb_flush_log_at_trx_commit=1
# and sync_binlog=1; PostgreSQL fsync=on, synchronous_commit=on). Data lives under
# $SINGLE_DIR (default /tmp/certa-peers); start wipes it.
set -euo pipefail

dir=${SINGLE_DIR:-/tmp/certa-peers}

install() {
	if command -v mariadbd >/dev/null && ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
		return
	fi
	# Install only: keep Debian from starting its own servers.
	printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
	chmod +x /usr/sbin/policy-rc.d
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mariadb-server postgresql >/dev/null
	rm -f /usr/sbin/policy-rc.d
}

pgbin() { ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1; }

start_mariadb() {
	stop_mariadb
	local d=$dir/mariadb
	rm -rf "$d" && mkdir -p "$d/data"
	cat >"$d/my.cnf" <<EOF
[mariadbd]
datadir=$d/data
socket=$d/mysqld.sock
pid-file=$d/mysqld.pid
log-error=$d/error.log
port=13406
bind-address=127.0.0.1
user=mysql
skip-name-resolve
max_connections=500
innodb_buffer_pool_size=512M
innodb_flush_log_at_trx_commit=1
sync_binlog=1
log-bin=$d/data/binlog
binlog_format=ROW
EOF
	# The server runs as mysql, as Debian's does.
	chown -R mysql:mysql "$d"
	mariadb-install-db --defaults-file="$d/my.cnf" --user=mysql --auth-root-authentication-method=normal >/dev/null
	mariadbd --defaults-file="$d/my.cnf" </dev/null >/dev/null 2>&1 &
	for _ in $(seq 1 60); do
		mariadb --socket="$d/mysqld.sock" -uroot -e "SELECT 1" >/dev/null 2>&1 && break
		sleep 1
	done
	mariadb --socket="$d/mysqld.sock" -uroot -e "
		CREATE USER IF NOT EXISTS 'bench'@'%' IDENTIFIED BY 'bench';
		GRANT ALL ON *.* TO 'bench'@'%';
		CREATE DATABASE IF NOT EXISTS bench;"
	echo "mariadb: 127.0.0.1:13406, user bench, password bench, database bench"
}

stop_mariadb() {
	local pidf=$dir/mariadb/mysqld.pid
	[ -f "$pidf" ] || return 0
	pid=$(cat "$pidf")
	kill "$pid" 2>/dev/null || true
	for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
}

# PostgreSQL refuses to run as root: it runs as the postgres user the package creates.
start_postgres() {
	stop_postgres
	local d=$dir/postgres bin
	bin=$(pgbin)
	rm -rf "$d" && mkdir -p "$d" && chown postgres "$d"
	su postgres -c "$bin/initdb -D $d -U postgres --auth=trust" >/dev/null
	cat >>"$d/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
port = 15432
unix_socket_directories = '$d'
max_connections = 500
shared_buffers = 512MB
fsync = on
synchronous_commit = on
EOF
	su postgres -c "$bin/pg_ctl -D $d -l $d/server.log -w start" >/dev/null
	"$bin/psql" -h 127.0.0.1 -p 15432 -U postgres -qc "CREATE USER bench PASSWORD 'bench' SUPERUSER" -c "CREATE DATABASE bench OWNER bench"
	echo "postgres: 127.0.0.1:15432, user bench, password bench, database bench"
}

stop_postgres() {
	local d=$dir/postgres
	[ -f "$d/postmaster.pid" ] || return 0
	su postgres -c "$(pgbin)/pg_ctl -D $d -m fast -w stop" >/dev/null || true
}

case "${1:-} ${2:-}" in
"install ") install ;;
"start mariadb" | "start postgres" | "stop mariadb" | "stop postgres") "$1_$2" ;;
*) echo "usage: $0 install | start|stop mariadb|postgres" >&2; exit 2 ;;
esac
