// Package chaos is certa's fault-injection harness: it runs a real cluster
// of `certa node` processes (localcluster), drives workloads through real
// PostgreSQL connections while a nemesis injects faults (kills, pauses),
// records every operation with its outcome (ok, failed, or indeterminate
// when the client did not learn it), and checks the histories: bank sums,
// list-append anomalies (elle), acknowledged inserts, linearizable sync
// reads (porcupine), and convergence of every node's data once faults heal
// and load stops.
package chaos
