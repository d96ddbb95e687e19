package pgwire

import (
	"slices"
	"strings"

	"certa/sqlerr"
)

// notSettings are the startup parameters that are not run-time
// parameters of the session: the others are set at connection, as
// PostgreSQL does (client_encoding is fixed: certa speaks UTF8 only).
var notSettings = []string{"user", "database", "options", "replication", "client_encoding"}

// startupSettings returns the run-time parameters a startup packet sets,
// in the order PostgreSQL applies them: those of its options (-c
// name=value and --name=value, as PostgreSQL reads them: words split at
// blanks, a backslash keeps the next character), then its parameters by
// name, which win (psql's application_name over the options').
func startupSettings(params map[string]string) ([][2]string, error) {
	var out [][2]string
	words := splitOptions(params["options"])
	for i := 0; i < len(words); i++ {
		w := words[i]
		var setting string
		switch {
		case w == "-c" && i+1 < len(words):
			i++
			setting = words[i]
		case strings.HasPrefix(w, "-c") && len(w) > 2:
			setting = w[2:]
		case strings.HasPrefix(w, "--") && len(w) > 2:
			setting = w[2:]
		default:
			return nil, sqlerr.New(sqlerr.SyntaxError, "invalid command-line argument for server process: %s", w)
		}
		name, value, ok := strings.Cut(setting, "=")
		if !ok {
			return nil, sqlerr.New(sqlerr.SyntaxError, "-c %s requires a value", setting)
		}
		out = append(out, [2]string{strings.ReplaceAll(name, "-", "_"), value})
	}
	var named [][2]string
	for name, value := range params {
		if !slices.Contains(notSettings, name) && !strings.HasPrefix(name, "_pq_.") {
			named = append(named, [2]string{name, value})
		}
	}
	slices.SortFunc(named, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	return append(out, named...), nil
}

// splitOptions splits a startup packet's options into words as
// PostgreSQL's pg_split_opts does.
func splitOptions(opts string) []string {
	var words []string
	var w strings.Builder
	in := false
	for i := 0; i < len(opts); i++ {
		c := opts[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		case c == '\\' && i+1 < len(opts):
			i++
			w.WriteByte(opts[i])
			in = true
		default:
			w.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, w.String())
	}
	return words
}
