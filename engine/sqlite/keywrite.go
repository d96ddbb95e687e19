package sqlite

import "strings"

// Key writes. A transaction that has read at its snapshot and then writes
// must write on the latest state: SQLite lets only the newest snapshot
// write. Moving forward normally means checking that everything it read is
// unchanged (moveforward.go), which snapshot isolation does not ask for and
// which fails often when the reads were many. A key write needs no such
// check: it changes only rows it names by their whole primary key and
// computes their new values from those rows alone, so run on the latest
// state it does what it would have done on the snapshot, unless one of those
// rows changed in between; and then certification, which keeps the
// transaction's first snapshot, refuses it (first committer wins).

// keyWrite reports whether sql, prepared with the authorizer's record rec,
// is a key write: INSERT INTO t [(cols)] VALUES (...)[, (...)], or UPDATE t
// SET ... / DELETE FROM t with WHERE naming every primary-key column once by
// equality with a parameter or literal; no subquery, RETURNING, ON CONFLICT,
// OR REPLACE or FROM. (certa refuses triggers, which could read anything.)
// c's schema cache must be fresh.
func (c *conn) keyWrite(sql string, rec record) bool {
	if len(rec.writes) != 1 {
		return false
	}
	for _, r := range rec.reads {
		if !strings.EqualFold(r, rec.writes[0]) {
			return false
		}
	}
	toks := tokenize(sql)
	for _, t := range toks {
		switch strings.ToLower(t) {
		case "select", "returning", "on", "or", "from", "with":
			if strings.EqualFold(t, "from") && strings.EqualFold(toks[0], "delete") {
				continue // DELETE FROM t
			}
			return false
		}
	}
	var table string
	where := -1
	switch {
	case len(toks) >= 4 && isWord(toks[0], "insert") && isWord(toks[1], "into"):
		table = toks[2]
	case len(toks) >= 4 && isWord(toks[0], "update") && isWord(toks[2], "set"):
		table, where = toks[1], wordIndex(toks, "where")
	case len(toks) >= 4 && isWord(toks[0], "delete") && isWord(toks[1], "from") && isWord(toks[3], "where"):
		table, where = toks[2], 3
	default:
		return false
	}
	ti, err := c.table(unquote(table))
	if err != nil || !ti.exists || !ti.hasPK || !strings.EqualFold(ti.name, rec.writes[0]) {
		return false
	}
	if ti.hasForeignKeys() {
		// A foreign-key action may change other rows, even of this
		// table (fkeys.go).
		return false
	}
	if where < 0 {
		return isWord(toks[0], "insert")
	}
	return namesKey(toks[where+1:], ti.pk)
}

// namesKey reports whether toks are "col = value [AND col = value]..." with
// the columns exactly pk (in any order), each value a parameter or literal.
func namesKey(toks []string, pk []string) bool {
	if n := len(toks); n > 0 && toks[n-1] == ";" {
		toks = toks[:n-1]
	}
	seen := make(map[string]bool, len(pk))
	for i := 0; ; i += 4 {
		if i+3 > len(toks) || toks[i+1] != "=" || !isValue(toks[i+2]) {
			return false
		}
		col := strings.ToLower(unquote(toks[i][strings.LastIndexByte(toks[i], '.')+1:]))
		if seen[col] {
			return false
		}
		seen[col] = true
		if i+3 == len(toks) {
			break
		}
		if !isWord(toks[i+3], "and") {
			return false
		}
	}
	if len(seen) != len(pk) {
		return false
	}
	for _, p := range pk {
		if !seen[strings.ToLower(p)] {
			return false
		}
	}
	return true
}

// isValue reports whether a token is a parameter, a number or a string.
func isValue(t string) bool {
	if _, ok := paramTok(t); ok {
		return true
	}
	return t != "" && (t[0] >= '0' && t[0] <= '9' || t[0] == '\'')
}

func isWord(t, w string) bool { return strings.EqualFold(t, w) }

func wordIndex(toks []string, w string) int {
	for i, t := range toks {
		if isWord(t, w) {
			return i
		}
	}
	return -1
}
