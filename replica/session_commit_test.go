package replica

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"certa/engine"
	"certa/orderlog/memlog"
	"certa/result"
	"certa/writeset"
)

// interposingLog is a memlog that can order another node's commit just
// ahead of one of this node's: before each of the next appends of a batch,
// it appends the write set of the next of remote's statements, committed
// by node n2 on the state of that moment. It counts this node's appends of
// batches.
type interposingLog struct {
	*memlog.Log
	t   *testing.T
	eng engine.Engine

	mu       sync.Mutex
	remote   []string
	appended int
}

func (l *interposingLog) Append(data []byte, timeout time.Duration) error {
	if len(data) == 0 || data[0] == writeset.KindMember {
		return l.Log.Append(data, timeout) // a member's addresses
	}
	l.mu.Lock()
	l.appended++
	var stmt string
	if len(l.remote) > 0 {
		stmt, l.remote = l.remote[0], l.remote[1:]
	}
	l.mu.Unlock()
	if stmt != "" {
		ws, err := captureWriteSet(l.eng, stmt)
		if err != nil {
			l.t.Errorf("another node's commit: %v", err)
			return err
		}
		ws.Origin, ws.TxID = "n2", 1
		if err := l.Log.Append(writeset.EncodeBatch([]*writeset.WriteSet{ws}), timeout); err != nil {
			return err
		}
	}
	return l.Log.Append(data, timeout)
}

// interpose sets the statements of the commits to order ahead of this
// node's next appends, and starts counting them from 0.
func (l *interposingLog) interpose(remote []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.remote, l.appended = remote, 0
}

func (l *interposingLog) appends() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.appended
}

// noPeers is a cluster of one: there is nobody to ask.
type noPeers struct{}

func (noPeers) Forward(context.Context, string, []byte) error { return errNoPeers }
func (noPeers) ReadIndex(context.Context, string) (uint64, uint64, error) {
	return 0, 0, errNoPeers
}
func (noPeers) Join(context.Context, string, writeset.Member) error { return errNoPeers }
func (noPeers) Leadership(context.Context, string) (uint64, string, error) {
	return 0, "", errNoPeers
}
func (noPeers) Outcome(context.Context, string, uint64) (uint64, bool, error) {
	return 0, false, errNoPeers
}
func (noPeers) Snapshot(context.Context, string) (io.ReadCloser, error) { return nil, errNoPeers }

var errNoPeers = errors.New("no peers in this test")

// startSQLiteNode starts node n1 over a new SQLite database, its log a
// memlog of which it is the leader.
func startSQLiteNode(t *testing.T) (*Node, *interposingLog) {
	t.Helper()
	eng := openSQLite(t, filepath.Join(t.TempDir(), "data.db"))
	n, err := New(Config{
		Self:   writeset.Member{ID: "n1"},
		Fatal:  func(err error) { t.Errorf("node stopped: %v", err) },
		Logger: slog.New(slog.DiscardHandler),
	}, eng)
	if err != nil {
		t.Fatal(err)
	}
	ml, err := memlog.Open(memlog.Config{ID: "n1"}, n.StateMachine())
	if err != nil {
		t.Fatal(err)
	}
	l := &interposingLog{Log: ml, t: t, eng: eng}
	n.Start(l, noPeers{})
	t.Cleanup(func() {
		n.Close()
		ml.Close()
	})
	return n, l
}

// query returns the rows of sql read on the node: values separated by
// spaces, rows by "; ".
func query(t *testing.T, n *Node, sql string) string {
	t.Helper()
	var buf result.Buffer
	if err := n.engine.Read(context.Background(), sql, &buf); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	var rows []string
	for _, r := range buf.Rows {
		rows = append(rows, strings.TrimSuffix(fmt.Sprintln(r...), "\n"))
	}
	return strings.Join(rows, "; ")
}

// What a session's client is told when its transaction commits, or does
// not, on a node over SQLite ordering through a log: each step's tag or
// SQLSTATE and transaction status, whether the node appended anything,
// and what the data is afterwards. The table holds row (1, 10) at the
// start, committed at seqno 2.
func TestSessionCommitOutcomes(t *testing.T) {
	for _, c := range []struct {
		name string
		// remote are other nodes' commits ordered just ahead of this
		// node's next appends, one each.
		remote     []string
		noLeader   bool
		steps      []sessionStep
		appends    int    // the batches this node appends in the steps
		lastCommit uint64 // the session's certa.last_commit_seqno afterwards
		rows       string // SELECT * FROM t ORDER BY id afterwards
	}{{
		name:       "an autocommit write commits before its row count is told",
		steps:      []sessionStep{{"INSERT INTO t VALUES (2, 20)", "INSERT 0 1", 'I'}},
		appends:    1,
		lastCommit: 3,
		rows:       "1 10; 2 20",
	}, {
		name: "a block commits at COMMIT, in one write set",
		steps: []sessionStep{
			{"BEGIN", "BEGIN", 'T'},
			{"INSERT INTO t VALUES (2, 20)", "INSERT 0 1", 'T'},
			{"UPDATE t SET v = 11 WHERE id = 1", "UPDATE 1", 'T'},
			{"COMMIT", "COMMIT", 'I'},
		},
		appends:    1,
		lastCommit: 3,
		rows:       "1 11; 2 20",
	}, {
		name:   "a block that lost certification fails at COMMIT with 40001, not retried",
		remote: []string{"UPDATE t SET v = 100 WHERE id = 1"},
		steps: []sessionStep{
			{"BEGIN", "BEGIN", 'T'},
			{"UPDATE t SET v = 11 WHERE id = 1", "UPDATE 1", 'T'},
			{"INSERT INTO t VALUES (2, 20)", "INSERT 0 1", 'T'},
			{"COMMIT", "!40001", 'I'},
		},
		appends:    1,
		lastCommit: 2,
		rows:       "1 100",
	}, {
		name:       "an autocommit write that lost certification runs again on the newer state",
		remote:     []string{"UPDATE t SET v = v + 100 WHERE id = 1"},
		steps:      []sessionStep{{"UPDATE t SET v = v + 1 WHERE id = 1", "UPDATE 1", 'I'}},
		appends:    2,
		lastCommit: 5,
		rows:       "1 111",
	}, {
		name: "an autocommit write that keeps losing gives up after 3 retries",
		remote: []string{"UPDATE t SET v = v + 100 WHERE id = 1", "UPDATE t SET v = v + 100 WHERE id = 1",
			"UPDATE t SET v = v + 100 WHERE id = 1", "UPDATE t SET v = v + 100 WHERE id = 1"},
		steps:      []sessionStep{{"UPDATE t SET v = v + 1 WHERE id = 1", "!40001", 'I'}},
		appends:    4,
		lastCommit: 2,
		rows:       "1 410",
	}, {
		name:   "a certified write set that fails at apply reports the engine's error at COMMIT",
		remote: []string{"INSERT INTO t VALUES (5, 20)"},
		steps: []sessionStep{
			{"BEGIN", "BEGIN", 'T'},
			{"INSERT INTO t VALUES (2, 20)", "INSERT 0 1", 'T'},
			{"COMMIT", "!23505", 'I'},
			{"INSERT INTO t VALUES (3, 30)", "INSERT 0 1", 'I'},
		},
		appends:    2,
		lastCommit: 5,
		rows:       "1 10; 3 30; 5 20",
	}, {
		name: "blocks that wrote nothing commit without the log, as does COMMIT outside a block",
		steps: []sessionStep{
			{"BEGIN", "BEGIN", 'T'},
			{"COMMIT", "COMMIT", 'I'},
			{"BEGIN", "BEGIN", 'T'},
			{"SELECT v FROM t", "SELECT 1", 'T'},
			{"UPDATE t SET v = 11 WHERE id = 7", "UPDATE 0", 'T'},
			{"COMMIT", "COMMIT", 'I'},
			{"COMMIT", "COMMIT", 'I'},
		},
		lastCommit: 2,
		rows:       "1 10",
	}, {
		name: "a schema change in a block commits with the block's rows",
		steps: []sessionStep{
			{"BEGIN", "BEGIN", 'T'},
			{"INSERT INTO t VALUES (2, 20)", "INSERT 0 1", 'T'},
			{"CREATE TABLE u (id INTEGER PRIMARY KEY)", "CREATE TABLE", 'T'},
			{"INSERT INTO u VALUES (1)", "INSERT 0 1", 'T'},
			{"COMMIT", "COMMIT", 'I'},
		},
		appends:    1,
		lastCommit: 3,
		rows:       "1 10; 2 20",
	}, {
		name: "a refused schema change fails the block, which then commits nothing",
		steps: []sessionStep{
			{"BEGIN", "BEGIN", 'T'},
			{"INSERT INTO t VALUES (2, 20)", "INSERT 0 1", 'T'},
			{"CREATE TABLE u (v money PRIMARY KEY)", "!0A000", 'E'},
			{"COMMIT", "ROLLBACK", 'I'},
		},
		lastCommit: 2,
		rows:       "1 10",
	}, {
		name:     "without a leader, COMMIT and autocommit writes are refused with 57P03 and nothing is appended",
		noLeader: true,
		steps: []sessionStep{
			{"BEGIN", "BEGIN", 'T'},
			{"INSERT INTO t VALUES (2, 20)", "INSERT 0 1", 'T'},
			{"COMMIT", "!57P03", 'I'},
			{"INSERT INTO t VALUES (3, 30)", "!57P03", 'I'},
			{"SELECT v FROM t", "SELECT 1", 'I'},
		},
		lastCommit: 2,
		rows:       "1 10",
	}} {
		t.Run(c.name, func(t *testing.T) {
			n, l := startSQLiteNode(t)
			s := n.NewSession()
			defer s.Close()
			runSteps(t, s, []sessionStep{
				{"CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER UNIQUE)", "CREATE TABLE", 'I'},
				{"INSERT INTO t VALUES (1, 10)", "INSERT 0 1", 'I'},
			})
			l.interpose(c.remote)
			if c.noLeader {
				l.SetLeader("")
			}
			runSteps(t, s, c.steps)
			if got := l.appends(); got != c.appends {
				t.Errorf("the node appended %d batches, want %d", got, c.appends)
			}
			if s.lastCommit != c.lastCommit {
				t.Errorf("certa.last_commit_seqno %d, want %d", s.lastCommit, c.lastCommit)
			}
			if got := query(t, n, "SELECT * FROM t ORDER BY id"); got != c.rows {
				t.Errorf("rows %q, want %q", got, c.rows)
			}
		})
	}
}
