// Package elle checks list-append transaction histories for isolation
// anomalies, in the spirit of Jepsen's Elle (Kingsbury and Alvaro, "Elle:
// Inferring Isolation Anomalies from Experimental Observations", VLDB 2020).
//
// The workload appends unique values to lists stored under keys and reads
// whole lists back. Because a read returns every value appended so far in
// order, the reads reveal the version order of each key, and from it which
// transaction wrote, read or overwrote which version. Check infers these
// dependencies (ww, wr, rw) between committed transactions, then looks for
// the cycles that Adya's isolation levels forbid (G0, G1c, G-single, G2) and
// for the anomalies a single read shows on its own (aborted and intermediate
// reads, duplicates, values nobody wrote, a transaction not seeing its own
// appends).
//
// What it infers and what it does not:
//
//   - The version order of a key is its longest read; every other read of the
//     key must be a prefix of it. Appends that no read observed have no known
//     position and produce no edges.
//   - A read that is itself anomalous (duplicates, garbage, aborted or
//     intermediate read, internal inconsistency) is reported once and left
//     out of the dependency graph, so that one fault does not come back as a
//     cycle too.
//   - Only dependencies are inferred, not real-time order: a history can be
//     serializable here and still not strictly serializable.
//   - An indeterminate (Info) transaction counts as committed when a read
//     observed one of its appends; its own reads are unknown and ignored.
//
// Check is a pure function of the history: no I/O, no clocks. Callers decide
// what is allowed; snapshot isolation allows G2-item (write skew), see
// Result.Valid.
package elle
