#!/usr/bin/env bash
# A 3-node MariaDB Galera cluster on loopback, for `certa bench`.
#
#   bench/peers/galera.sh install   # apt-get: mariadb-server, galera-4, rsync
#   bench/peers/galera.sh start     # 3 nodes, MySQL protocol on 127.0.0.1:13306-13308
#   bench/peers/galera.sh stop
#
# Durability as certa's: every commit is fsync'd (innodb_flush_log_at_trx_commit=1,
# sync_binlog=1) and certified by the whole cluster before it returns. Data lives
# under $GALERA_DIR (default /tmp/certa-peers/galera); start wipes it.
set -euo pipefail

dir=${GALERA_DIR:-/tmp/certa-peers/galera}
nodes=3
port() { echo $((13306 + $1)); }       # MySQL protocol
gcomm() { echo $((14567 + 10 * $1)); } # group communication
ist() { echo $((14568 + 10 * $1)); }   # incremental state transfer
sst() { echo $((14444 + 10 * $1)); }   # full state transfer (rsync)

install() {
	if command -v mariadbd >/dev/null && [ -e /usr/lib/galera/libgalera_smm.so ]; then
		return
	fi
	# Install only: keep Debian from starting its own server on 3306.
	printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
	chmod +x /usr/sbin/policy-rc.d
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mariadb-server galera-4 rsync >/dev/null
	rm -f /usr/sbin/policy-rc.d
}

config() { # node index
	local i=$1 peers=""
	for j in $(seq 0 $((nodes - 1))); do peers+="127.0.0.1:$(gcomm "$j"),"; done
	cat <<EOF
[mariadbd]
datadir=$dir/n$i
socket=$dir/n$i.sock
pid-file=$dir/n$i.pid
log-error=$dir/n$i.err
port=$(port "$i")
bind-address=127.0.0.1
user=mysql
skip-name-resolve
max_connections=500
innodb_buffer_pool_size=512M
innodb_flush_log_at_trx_commit=1
sync_binlog=1
binlog_format=ROW
default_storage_engine=InnoDB
innodb_autoinc_lock_mode=2
wsrep_on=ON
wsrep_provider=/usr/lib/galera/libgalera_smm.so
wsrep_cluster_name=certa-bench
wsrep_cluster_address=gcomm://${peers%,}
wsrep_node_name=n$i
wsrep_node_address=127.0.0.1:$(gcomm "$i")
wsrep_provider_options="gmcast.listen_addr=tcp://127.0.0.1:$(gcomm "$i");ist.recv_addr=127.0.0.1:$(ist "$i")"
wsrep_sst_method=rsync
wsrep_sst_receive_address=127.0.0.1:$(sst "$i")
wsrep_slave_threads=4
EOF
}

wait_ready() { # node index
	for _ in $(seq 1 120); do
		if [ "$(mariadb --socket="$dir/n$1.sock" -uroot -Nse "SHOW STATUS LIKE 'wsrep_ready'" 2>/dev/null | cut -f2)" = ON ]; then
			return
		fi
		sleep 1
	done
	echo "galera: node n$1 not ready after 2 minutes; see $dir/n$1.err" >&2
	exit 1
}

start() {
	stop
	rm -rf "$dir"
	mkdir -p "$dir"
	for i in $(seq 0 $((nodes - 1))); do
		config "$i" >"$dir/n$i.cnf"
	done
	# The servers run as mysql, as Debian's do: the rsync daemon that receives a state
	# transfer drops root for nobody, who could not write a root-owned data directory.
	for i in $(seq 0 $((nodes - 1))); do mkdir -p "$dir/n$i"; done
	chown -R mysql:mysql "$dir"
	mariadb-install-db --defaults-file="$dir/n0.cnf" --user=mysql --auth-root-authentication-method=normal >/dev/null
	mariadbd --defaults-file="$dir/n0.cnf" --wsrep-new-cluster </dev/null >/dev/null 2>&1 &
	wait_ready 0
	mariadb --socket="$dir/n0.sock" -uroot -e "
		CREATE USER IF NOT EXISTS 'bench'@'%' IDENTIFIED BY 'bench';
		GRANT ALL ON *.* TO 'bench'@'%';
		CREATE DATABASE IF NOT EXISTS bench;"
	for i in $(seq 1 $((nodes - 1))); do
		mariadbd --defaults-file="$dir/n$i.cnf" </dev/null >/dev/null 2>&1 &
		wait_ready "$i"
	done
	echo "galera: $nodes nodes on 127.0.0.1:$(port 0)-$(port $((nodes - 1))), user bench, password bench, database bench"
}

stop() {
	for i in $(seq 0 $((nodes - 1))); do
		[ -f "$dir/n$i.pid" ] || continue
		pid=$(cat "$dir/n$i.pid")
		kill "$pid" 2>/dev/null || true
		for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
	done
}

case "${1:-}" in
install | start | stop) "$1" ;;
*) echo "usage: $0 install|start|stop" >&2; exit 2 ;;
esac
