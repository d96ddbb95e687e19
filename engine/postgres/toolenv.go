package postgres

import (
	"errors"
	"net/url"
	"strings"
)

// State transfer runs pg_dump and pg_restore (snapshot.go) over the
// engine's DSN. pgconn reads the DSN for certa's own connections; the
// tools are libpq's and are given its host, port, user and database as
// options, its password through PGPASSWORD (not on the command line, which
// other users may read), and its TLS and authentication settings
// (sslmode, sslrootcert, a client certificate ...) through the
// environment variables libpq reads them from: without them a tool would
// connect without verifying the server, or fail to authenticate with the
// client certificate the DSN names.

// toolSettings are the DSN keywords passed to the tools, with the
// environment variable libpq reads each from.
var toolSettings = map[string]string{
	"sslmode":                  "PGSSLMODE",
	"sslrootcert":              "PGSSLROOTCERT",
	"sslcert":                  "PGSSLCERT",
	"sslkey":                   "PGSSLKEY",
	"sslcrl":                   "PGSSLCRL",
	"sslcrldir":                "PGSSLCRLDIR",
	"sslsni":                   "PGSSLSNI",
	"ssl_min_protocol_version": "PGSSLMINPROTOCOLVERSION",
	"ssl_max_protocol_version": "PGSSLMAXPROTOCOLVERSION",
	"channel_binding":          "PGCHANNELBINDING",
	"gssencmode":               "PGGSSENCMODE",
	"krbsrvname":               "PGKRBSRVNAME",
	"passfile":                 "PGPASSFILE",
	"connect_timeout":          "PGCONNECT_TIMEOUT",
}

// toolEnv returns the environment entries ("PGSSLMODE=verify-full") that
// give the tools the settings of dsn that toolSettings lists.
func toolEnv(dsn string) ([]string, error) {
	settings, err := dsnSettings(dsn)
	if err != nil {
		return nil, err
	}
	var env []string
	for key, value := range settings {
		if name, ok := toolSettings[key]; ok {
			env = append(env, name+"="+value)
		}
	}
	return env, nil
}

// dsnSettings returns the keyword/value settings of dsn, as libpq reads a
// connection string: a postgres:// or postgresql:// URL's query
// parameters, or the pairs of a keyword/value string.
func dsnSettings(dsn string) (map[string]string, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		_, query, _ := strings.Cut(dsn, "?")
		values, err := url.ParseQuery(query)
		if err != nil {
			return nil, err
		}
		out := map[string]string{}
		for k, v := range values {
			out[k] = v[len(v)-1]
		}
		return out, nil
	}
	return keywordValues(dsn)
}

// errDSNSyntax is keywordValues's error for a string libpq would refuse.
var errDSNSyntax = errors.New("postgres engine: the DSN is not keyword=value pairs")

// keywordValues reads "host=h port=5432 password='a b\'c'": keywords,
// "=", and values either single-quoted (a backslash escapes the next
// character) or running to the next space (a backslash escapes there
// too). A keyword given twice keeps its last value, as in libpq.
func keywordValues(s string) (map[string]string, error) {
	out := map[string]string{}
	i := 0
	skipSpace := func() {
		for i < len(s) && strings.IndexByte(" \t\n\r\f\v", s[i]) >= 0 {
			i++
		}
	}
	for {
		skipSpace()
		if i == len(s) {
			return out, nil
		}
		start := i
		for i < len(s) && s[i] != '=' && strings.IndexByte(" \t\n\r\f\v", s[i]) < 0 {
			i++
		}
		key := s[start:i]
		skipSpace()
		if key == "" || i == len(s) || s[i] != '=' {
			return nil, errDSNSyntax
		}
		i++
		skipSpace()
		var value strings.Builder
		if i < len(s) && s[i] == '\'' {
			i++
			for ; i < len(s) && s[i] != '\''; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				value.WriteByte(s[i])
			}
			if i == len(s) {
				return nil, errDSNSyntax // unterminated quote
			}
			i++
		} else {
			for ; i < len(s) && strings.IndexByte(" \t\n\r\f\v", s[i]) < 0; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				value.WriteByte(s[i])
			}
		}
		out[key] = value.String()
	}
}
