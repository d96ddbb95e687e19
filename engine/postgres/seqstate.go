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
// id of another client's row). So the end of every transaction discards
// the backend's sequence state (DISCARD SEQUENCES, resetStatements), and
// the session keeps its values instead (engine.SequenceValues, by
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

// tookSequence records in the session's values v (nil: no session) that
// the sequence of oid seq ("0": lastval) was left at value.
func tookSequence(v *engine.SequenceValues, seq, value string) {
	n, err := strconv.ParseInt(value, 10, 64)
	if v == nil || err != nil {
		return
	}
	if seq == "0" {
		v.Last, v.Any = n, true
		return
	}
	if v.ByName == nil {
		v.ByName = map[string]int64{}
	}
	v.ByName[seq] = n
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
	r := pgparse.SequenceReads{Currval: "certa.currval", Lastval: "certa.lastval", Known: string(known)}
	if v.Any {
		r.Last = strconv.FormatInt(v.Last, 10)
	}
	out, _ := pgparse.RewriteSequenceReads(sql, r)
	return out
}
