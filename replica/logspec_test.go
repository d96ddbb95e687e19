package replica

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"certa/sqlerr"
	"certa/writeset"
)

// A log is written for these tests in a short notation, one string per
// Apply call of the state machine; the node under test is n1:
//
//	t/1@0              one entry holding one write set of n1: key 1 of table t, snapshot 0
//	t/1,u/2@3 from n2  a write set of two keys with snapshot 3, committed on node n2
//	t/1@0 + t/2@0      one entry holding a batch of two write sets
//	t/1@0 ; t/2@0      two entries, handed to the state machine in one Apply call
//	ddl t / ddl        a schema change touching table t / every table
//	member n2          an entry announcing a member's addresses (no seqno)
//
// Write sets get TxIDs 1, 2, ... in log order, which is also their seqno.

// specLog is a parsed log: the entries of each Apply call, and the write
// sets in log order.
type specLog struct {
	calls     [][][]byte
	writeSets []*writeset.WriteSet
}

func parseLog(t *testing.T, spec []string) specLog {
	t.Helper()
	var l specLog
	for _, call := range spec {
		var entries [][]byte
		for _, entry := range strings.Split(call, ";") {
			entry = strings.TrimSpace(entry)
			if id, ok := strings.CutPrefix(entry, "member "); ok {
				entries = append(entries, writeset.EncodeMember(writeset.Member{ID: id, HTTPAddr: id + ":http"}))
				continue
			}
			var batch []*writeset.WriteSet
			for _, w := range strings.Split(entry, "+") {
				ws, err := parseWriteSet(strings.TrimSpace(w))
				if err != nil {
					t.Fatalf("log %q: %v", call, err)
				}
				l.writeSets = append(l.writeSets, ws)
				ws.TxID = uint64(len(l.writeSets))
				batch = append(batch, ws)
			}
			entries = append(entries, writeset.EncodeBatch(batch))
		}
		l.calls = append(l.calls, entries)
	}
	return l
}

// parseWriteSet parses "ddl [table]" or "keys@snapshot [from node]".
func parseWriteSet(s string) (*writeset.WriteSet, error) {
	f := strings.Fields(s)
	if len(f) > 0 && f[0] == "ddl" {
		return &writeset.WriteSet{Origin: "n1", DDL: s, Tables: f[1:]}, nil
	}
	ws := &writeset.WriteSet{Origin: "n1"}
	switch {
	case len(f) == 3 && f[1] == "from":
		ws.Origin = f[2]
	case len(f) != 1:
		return nil, fmt.Errorf("write set %q: want keys@snapshot [from node]", s)
	}
	keys, snap, ok := strings.Cut(f[0], "@")
	n, err := strconv.ParseUint(snap, 10, 64)
	if !ok || err != nil {
		return nil, fmt.Errorf("write set %q: want keys@snapshot", s)
	}
	ws.Snapshot = n
	for _, k := range strings.Split(keys, ",") {
		table, id, _ := strings.Cut(k, "/")
		pk, err := strconv.ParseInt(id, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("key %q: want table/number", k)
		}
		ws.Keys = append(ws.Keys, writeset.EncodeKey(table, pk))
		ws.Tables = append(ws.Tables, table)
	}
	ws.Normalize()
	return ws, nil
}

// entries returns the log's entries in order.
func (l specLog) entries() [][]byte {
	var all [][]byte
	for _, c := range l.calls {
		all = append(all, c...)
	}
	return all
}

// decisions returns what each waiter was told: "seqno decision", or
// "txid -" when nothing.
func decisions(waits []chan outcome) []string {
	out := make([]string, len(waits))
	for i, ch := range waits {
		select {
		case o := <-ch:
			out[i] = fmt.Sprintf("%d %s", o.seqno, decision(o.err))
		default:
			out[i] = fmt.Sprintf("%d -", i+1)
		}
	}
	return out
}

var (
	tableInMessage = regexp.MustCompile(`table "([^"]*)"`)
	seqnoInDetail  = regexp.MustCompile(`at seqno (\d+)`)
)

// decision names a commit outcome from the error its client gets: "pass",
// "conflict t@1", "schema changed t", "too old", "invalid", or another
// SQLSTATE.
func decision(err error) string {
	if err == nil {
		return "pass"
	}
	var e *sqlerr.Error
	if !errors.As(err, &e) {
		return "error: " + err.Error()
	}
	table := ""
	if m := tableInMessage.FindStringSubmatch(e.Message); m != nil {
		table = m[1]
	}
	switch {
	case e.Code != sqlerr.SerializationFailure:
		return e.Code
	case strings.Contains(e.Message, "too old"):
		return "too old"
	case strings.Contains(e.Message, "not before its commit position"):
		return "invalid"
	case strings.Contains(e.Message, "schema of table"):
		return "schema changed " + table
	}
	if m := seqnoInDetail.FindStringSubmatch(e.Detail); m != nil {
		return "conflict " + table + "@" + m[1]
	}
	return "40001: " + e.Message
}
