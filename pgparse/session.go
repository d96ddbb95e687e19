package pgparse

import (
	"encoding/json"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// What a statement leaves in its PostgreSQL session beyond its
// transaction (SessionState).
const (
	StateNone          = ""
	StateAdvisoryLock  = "a session-level advisory lock"
	StateSetting       = "a session-level setting (set_config)"
	StatePrepared      = "a prepared statement (PREPARE)"
	StateHoldCursor    = "a cursor WITH HOLD"
	StateListen        = "LISTEN"
	cursorOptHold      = 0x20 // PostgreSQL's CURSOR_OPT_HOLD
	sessionStateMarker = "set_config advisory_lock prepare hold listen"
)

// SessionState says what sql leaves in its PostgreSQL session beyond its
// transaction, StateNone for nothing: a session-level advisory lock
// (pg_advisory_lock and pg_try_advisory_lock, shared or not), a setting
// (set_config whose is_local is not the constant true), a prepared
// statement (PREPARE), a cursor WITH HOLD, or LISTEN. Only what the
// statement itself names is seen, not what a function it calls does.
// A statement the parser cannot read leaves nothing (PostgreSQL refuses it).
func SessionState(sql string) string {
	lower := strings.ToLower(sql)
	mentioned := false
	for _, w := range strings.Fields(sessionStateMarker) {
		if strings.Contains(lower, w) {
			mentioned = true
			break
		}
	}
	if !mentioned {
		return StateNone // cheap: almost every statement
	}
	tree, err := pg_query.ParseToJSON(sql)
	if err != nil {
		return StateNone
	}
	var root any
	if err := json.Unmarshal([]byte(tree), &root); err != nil {
		return StateNone
	}
	return sessionStateIn(root)
}

// sessionStateIn walks a parse tree in pg_query's JSON form.
func sessionStateIn(n any) string {
	switch n := n.(type) {
	case []any:
		for _, c := range n {
			if s := sessionStateIn(c); s != StateNone {
				return s
			}
		}
	case map[string]any:
		for kind, v := range n {
			if s := nodeState(kind, v); s != StateNone {
				return s
			}
			if s := sessionStateIn(v); s != StateNone {
				return s
			}
		}
	}
	return StateNone
}

// nodeState is the state one node of kind leaves, by itself.
func nodeState(kind string, v any) string {
	node, _ := v.(map[string]any)
	switch kind {
	case "PrepareStmt":
		return StatePrepared
	case "ListenStmt":
		return StateListen
	case "DeclareCursorStmt":
		if opts, _ := node["options"].(float64); int(opts)&cursorOptHold != 0 {
			return StateHoldCursor
		}
	case "FuncCall":
		switch funcName(node) {
		case "pg_advisory_lock", "pg_advisory_lock_shared", "pg_try_advisory_lock", "pg_try_advisory_lock_shared":
			return StateAdvisoryLock
		case "set_config":
			args, _ := node["args"].([]any)
			if len(args) != 3 || !constTrue(args[2]) {
				return StateSetting
			}
		}
	}
	return StateNone
}

// funcName returns the last part of a FuncCall's name.
func funcName(node map[string]any) string {
	parts, _ := node["funcname"].([]any)
	if len(parts) == 0 {
		return ""
	}
	last, _ := parts[len(parts)-1].(map[string]any)
	str, _ := last["String"].(map[string]any)
	name, _ := str["sval"].(string)
	return name
}

// constTrue reports whether an argument is the constant true.
func constTrue(arg any) bool {
	n, _ := arg.(map[string]any)
	c, _ := n["A_Const"].(map[string]any)
	b, _ := c["boolval"].(map[string]any)
	v, _ := b["boolval"].(bool)
	return v
}
