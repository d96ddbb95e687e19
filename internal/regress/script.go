package regress

import (
	"regexp"
	"strings"
)

// setFilename matches the line that names the file of the next COPY:
// \set filename :abs_srcdir '/data/onek.data'.
var setFilename = regexp.MustCompile(`^\\set\s+filename\s+:abs_(src|build)dir\s+'([^']*)'\s*$`)

// Script returns a test file rewritten for a server that is not on this
// machine's file system, or whose superuser the client is not: every
// server-side COPY ... FROM/TO :'filename' becomes psql's client-side
// \copy of the same file (one line: \copy takes the rest of its line and
// does no variable interpolation, so the file's path is written in). The
// same rewritten file runs through certa and through the plain PostgreSQL,
// so the comparison stays fair; psql echoes (-a) the rewritten lines on
// both. srcdir and builddir are the values of abs_srcdir and abs_builddir.
func Script(sql, srcdir, builddir string) string {
	lines := strings.Split(sql, "\n")
	var out []string
	filename := ""
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if m := setFilename.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			dir := srcdir
			if m[1] == "build" {
				dir = builddir
			}
			filename = dir + m[2]
		}
		if filename == "" || !isFileCopy(line) {
			out = append(out, line)
			continue
		}
		// The statement ends at the line that ends with a semicolon.
		stmt := []string{strings.TrimSpace(line)}
		for !strings.HasSuffix(stmt[len(stmt)-1], ";") && i+1 < len(lines) {
			i++
			stmt = append(stmt, strings.TrimSpace(lines[i]))
		}
		joined := strings.TrimSuffix(strings.Join(stmt, " "), ";")
		joined = strings.Replace(joined, ":'filename'", quote(filename), 1)
		out = append(out, `\`+joined)
	}
	return strings.Join(out, "\n")
}

// isFileCopy reports whether line starts a COPY statement from or to the
// file :'filename'.
func isFileCopy(line string) bool {
	t := strings.ToLower(strings.TrimSpace(line))
	return strings.HasPrefix(t, "copy ") && strings.Contains(line, ":'filename'")
}

// quote returns s as an SQL string literal.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
