// Package clustertest holds the end-to-end tests of certa: real `certa node`
// processes over real sockets, driven by a real PostgreSQL client (pgx),
// with nodes killed, paused and restarted while clients run.
package clustertest
