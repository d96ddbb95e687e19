package postgres

import (
	"encoding/json"
	"strconv"
	"strings"

	"certa/engine"
	"certa/pgparse"
)

// currval and lastval answer, in PostgreSQL, with what the session's own
// nextval took last, in any earlier transaction. A session here runs each
// transaction on whichever pooled backend is free, and a backend's
// sequence state is its own: left alone it would answer one session with
// another's value (an INSERT, then currval on another backend, gives the
// id of another client's row). So a backend keeps the sequence state of
// the session whose write transaction ran on it last (conn.seqOwner), for
// that session's next work, which prefers it (Session.seqBackend); any
// other work discards it first (DISCARD SEQUENCES, conn.
// discardOthersSequences). Column defaults and functions that call
// currval then answer as in PostgreSQL while the session keeps its
// backend, and fail with PostgreSQL's 55000 where it did not. The
// session also keeps its values (engine.SequenceValues, by
// sequence oid): the transaction reads them before it ends (txLocksSQL:
// the sequences its backend locked, which every nextval and setval does,
// through certa.sequence_values), and a statement that calls currval or lastval
// runs rewritten (pgparse.RewriteSequenceReads) to certa.currval and
// certa.lastval, which answer with the backend's own value when the
// transaction took one and with the session's otherwise, and fail as
// PostgreSQL does when there is neither.

// namesSequenceWrite reports whether sql may take sequence values by
// name: a transaction that ran it reads its sequence values at its end
// (txLocksSQL) even if it wrote no rows.
func namesSequenceWrite(lower string) bool {
	return strings.Contains(lower, "nextval") || strings.Contains(lower, "setval")
}

// namesSetval reports whether sql may call setval: a transaction that did
// may leave a sequence outside this node's blocks without being refused
// (checkSequenceValues).
func namesSetval(lower string) bool { return strings.Contains(lower, "setval") }

// tookSequences records in the session's values v (nil: no session) the
// values the transaction left its sequences at, by oid ("0": lastval).
// lastval is that of the sequence whose value it equals (PostgreSQL does
// not say which sequence it follows; two at the same value cannot be told
// apart, and either answers the same until a setval).
func tookSequences(v *engine.SequenceValues, values map[string]int64) {
	if v == nil || len(values) == 0 {
		return
	}
	if v.ByName == nil {
		v.ByName = map[string]int64{}
	}
	for seq, n := range values {
		if seq != "0" {
			v.ByName[seq] = n
		}
	}
	last, ok := values["0"]
	if !ok {
		return
	}
	v.Last, v.Any, v.LastName = last, true, ""
	for seq, n := range values {
		if seq != "0" && n == last && (v.LastName == "" || seq < v.LastName) {
			v.LastName = seq
		}
	}
}

// withSessionSequences returns sql with its calls of currval and lastval
// rewritten to fall back on the session's values v; sql itself if the
// session took none yet (the backend's own answer is then right).
func withSessionSequences(v *engine.SequenceValues, sql string) string {
	if v == nil || (len(v.ByName) == 0 && !v.Any) {
		return sql
	}
	known, err := json.Marshal(v.ByName)
	if err != nil {
		return sql
	}
	r := pgparse.SequenceReads{Currval: "certa.currval", Lastval: "certa.lastval", Known: string(known), LastSeq: v.LastName}
	if last, ok := v.LastValue(); ok {
		r.Last = strconv.FormatInt(last, 10)
	}
	out, _ := pgparse.RewriteSequenceReads(sql, r)
	return out
}
