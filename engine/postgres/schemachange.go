package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"certa/pgparse"
)

// schemaChange is a schema statement as it is replicated (a DDL write
// set's statement, or one of a transaction block's, opSchema): the
// client's text and the settings it ran under, so that every node parses
// and evaluates it alike (dates, time zones, string escapes, function
// bodies, the names its search path finds).
//
// certa's own SQL never shares a string with it: the applier and CheckDDL
// send the settings, the role and the statement as separate protocol
// messages, the statement alone in an extended-protocol one (one
// statement at most: PostgreSQL refuses a second), so no text of a
// client's, a trailing line comment or a forged write set, can change
// what certa runs around it.
type schemaChange struct {
	Settings map[string]string `json:"settings"`
	SQL      string            `json:"sql"`
	// Role is the client role the session acted as (SET ROLE), which
	// owns what the statement makes; "" is certa_client (roles.go).
	Role string `json:"role,omitempty"`
	// Travel are the columns the statement adds whose values follow it
	// as rows, the origin's (pinOrRefuse): each node computes its own
	// first.
	Travel []string `json:"travel,omitempty"`
}

// schemaSettings are the settings that travel with a schema statement:
// those that change how PostgreSQL parses it or evaluates what it
// computes (a default over existing rows, a CHECK, an index expression,
// a function body it checks) or keeps (a role's password, hashed as
// password_encryption says). Settings about time limits, logging or
// plans do not travel: they change no result.
var schemaSettings = []string{
	"search_path", "TimeZone", "timezone_abbreviations", "DateStyle", "IntervalStyle",
	"standard_conforming_strings", "backslash_quote", "escape_string_warning",
	"check_function_bodies", "extra_float_digits", "bytea_output",
	"lc_monetary", "lc_numeric", "lc_time", "default_text_search_config",
	"xmloption", "xmlbinary", "array_nulls", "transform_null_equals",
	"default_toast_compression", "default_table_access_method", "default_tablespace",
	"default_with_oids", "row_security", "password_encryption",
}

// errBadSchemaChange: a replicated schema statement does not decode, or
// names a setting that does not travel (a forged write set). It fails
// alike on every node.
var errBadSchemaChange = errors.New("schema statement not in the replicated form")

// role is the role sc runs as.
func (sc schemaChange) role() string {
	if sc.Role == "" {
		return clientRole
	}
	return sc.Role
}

// encode returns sc as the text that is replicated.
func (sc schemaChange) encode() string {
	b, _ := json.Marshal(sc) // strings only: cannot fail
	return string(b)
}

// decodeSchemaChange reads what encode wrote.
func decodeSchemaChange(text string) (schemaChange, error) {
	var sc schemaChange
	if err := json.Unmarshal([]byte(text), &sc); err != nil || sc.SQL == "" {
		return sc, fmt.Errorf("%w: %.80q", errBadSchemaChange, text)
	}
	for name := range sc.Settings {
		if !slices.Contains(schemaSettings, name) {
			return sc, fmt.Errorf("%w: setting %q does not travel with schema statements", errBadSchemaChange, name)
		}
	}
	if strings.HasPrefix(sc.Role, "certa_") || strings.HasPrefix(sc.Role, "pg_") || sc.Role == "none" {
		return sc, fmt.Errorf("%w: role %q is no client role", errBadSchemaChange, sc.Role)
	}
	return sc, nil
}

// settingsJSON returns schemaSettings as a JSON array, the parameter of
// readSettingsSQL.
func settingsJSON() []byte {
	b, _ := json.Marshal(schemaSettings)
	return b
}

// readSettingsSQL reads the values of the settings named by $1 (a JSON
// array) as one JSON object; a setting this server lacks is left out.
const readSettingsSQL = `SELECT pg_catalog.jsonb_object_agg(n, v) FROM
	(SELECT n, pg_catalog.current_setting(n, true) AS v FROM pg_catalog.jsonb_array_elements_text($1::pg_catalog.jsonb) AS n) s
	WHERE v IS NOT NULL`

// applySettingsSQL sets the settings of $1 (a JSON object) until the end
// of the transaction.
const applySettingsSQL = `SELECT pg_catalog.count(pg_catalog.set_config(key, value, true)) FROM pg_catalog.jsonb_each_text($1::pg_catalog.jsonb)`

// readSchemaSettings returns the values of schemaSettings on conn.
func readSchemaSettings(ctx context.Context, conn *pgconn.PgConn) (map[string]string, error) {
	r := conn.ExecParams(ctx, readSettingsSQL, [][]byte{settingsJSON()}, nil, nil, nil).Read()
	if r.Err != nil {
		return nil, r.Err
	}
	settings := map[string]string{}
	if err := json.Unmarshal(r.Rows[0][0], &settings); err != nil {
		return nil, fmt.Errorf("read settings: %w", err)
	}
	return settings, nil
}

// applySettings sets settings on conn until the end of its transaction.
func applySettings(ctx context.Context, conn *pgconn.PgConn, settings map[string]string) error {
	if len(settings) == 0 {
		return nil
	}
	b, _ := json.Marshal(settings)
	return conn.ExecParams(ctx, applySettingsSQL, [][]byte{b}, nil, nil, nil).Read().Err
}

// bodiesUnchecked returns settings with check_function_bodies off. A
// routine's body is checked once, where the client's session runs it
// (Tx.ExecLocal tries every routine definition there): under the
// session's names, which the checker and the appliers lack (its
// temporary tables). Run again elsewhere, it is not checked: PostgreSQL
// resolves its names when it is called, as it does for a routine made
// in another session.
func bodiesUnchecked(settings map[string]string) map[string]string {
	out := maps.Clone(settings)
	if out == nil {
		out = map[string]string{}
	}
	out["check_function_bodies"] = "off"
	return out
}

// holdSequences sets the sequences whose bounds sql may change
// (pgparse.SequencesRebounded: those an ALTER SEQUENCE names, or that own
// the column an ALTER TABLE retypes) at their start, opens the savepoint
// certa_hold, and returns where they were (certa.hold_sequences; "" when
// there are none). PostgreSQL checks a sequence's new bounds against
// where it is, which is each node's own place (sequences.go): held, every
// node runs the statement alike. releaseSequences puts them back, or at
// their end where that is now out of bounds; the caller then places them.
func holdSequences(ctx context.Context, conn *pgconn.PgConn, sql string) (string, error) {
	names := pgparse.SequencesRebounded(sql)
	if names == nil {
		return "", nil
	}
	list, err := json.Marshal(names)
	if err != nil {
		return "", err
	}
	r := conn.ExecParams(ctx, `SELECT certa.hold_sequences(ARRAY(SELECT pg_catalog.to_regclass(n)::pg_catalog.oid
		FROM pg_catalog.jsonb_array_elements_text($1::pg_catalog.jsonb) n))`, [][]byte{list}, nil, nil, nil).Read()
	if r.Err != nil {
		return "", r.Err
	}
	held := string(r.Rows[0][0])
	if held == "{}" {
		return "", nil
	}
	// setval is not undone by a rollback: the savepoint lets a failed
	// statement's transaction go on to release them.
	if _, err := conn.Exec(ctx, "SAVEPOINT certa_hold").ReadAll(); err != nil {
		return "", err
	}
	return held, nil
}

// releaseSequences undoes holdSequences (held "": nothing), and releases
// the savepoint certa_hold if it still exists (savepoint).
func releaseSequences(ctx context.Context, conn *pgconn.PgConn, held string, savepoint bool) error {
	if held == "" {
		return nil
	}
	if r := conn.ExecParams(ctx, "SELECT certa.release_sequences($1)", [][]byte{[]byte(held)}, nil, nil, nil).Read(); r.Err != nil {
		return r.Err
	}
	if !savepoint {
		return nil
	}
	_, err := conn.Exec(ctx, "RELEASE SAVEPOINT certa_hold").ReadAll()
	return err
}

// runSchemaChange runs sc in the transaction open on conn, as the client
// role (which then owns what it makes, and which the event triggers see),
// under sc's settings. With restore, the settings are set back afterwards
// (the applier's own, for the rows that follow in its transaction). Each
// part is a message of its own; the role is reset whatever the statement
// did. An error of the statement is PostgreSQL's (*pgconn.PgError), or
// errNodeDependent's (pinOrRefuse). With makeWay (the applier's),
// a statement that fails runs again once other sessions' temporary
// objects that depend on replicated ones are dropped (tempdeps.go), if
// there were any.
func runSchemaChange(ctx context.Context, conn *pgconn.PgConn, token string, sc schemaChange, restore bool, makeWay *tempWay) error {
	_, _, _, err := runSchemaChangeHeld(ctx, conn, token, sc, restore, makeWay, false)
	return err
}

// runSchemaChangeHeld is runSchemaChange, which also returns the
// sequences it held (holdSequences), for a caller that rolls the
// transaction back: ALTER SEQUENCE writes a sequence anew, so the
// rollback brings back the old one, as held, which it must release again.
// With pin (the trial's), it also returns the statement to replicate,
// with the values it computed pinned, and what of them must travel as
// rows instead (pinOrRefuse).
func runSchemaChangeHeld(ctx context.Context, conn *pgconn.PgConn, token string, sc schemaChange, restore bool, makeWay *tempWay,
	pin bool) (held, pinned string, values travel, err error) {
	var before map[string]string
	if restore {
		var err error
		if before, err = readSchemaSettings(ctx, conn); err != nil {
			return "", "", travel{}, err
		}
	}
	if _, err := conn.Exec(ctx, "SET LOCAL ROLE "+quoteIdent(sc.role())).ReadAll(); err != nil {
		return "", "", travel{}, err
	}
	if err := applySettings(ctx, conn, bodiesUnchecked(sc.Settings)); err != nil {
		return "", "", travel{}, err
	}
	there, err := columnsThere(ctx, conn, sc.SQL)
	if err != nil {
		return "", "", travel{}, err
	}
	if held, err = holdSequences(ctx, conn, sc.SQL); err != nil {
		return held, "", travel{}, err
	}
	if err := execSchemaStatement(ctx, conn, token, sc, makeWay); err != nil {
		if held != "" {
			conn.Exec(ctx, "ROLLBACK TO SAVEPOINT certa_hold").ReadAll()
			releaseSequences(ctx, conn, held, true)
		}
		return held, "", travel{}, err
	}
	if err := releaseSequences(ctx, conn, held, true); err != nil {
		return held, "", travel{}, err
	}
	if pinned, values, err = pinOrRefuse(ctx, conn, sc.SQL, pin, there, sc.Travel); err != nil {
		return held, "", travel{}, err
	}
	if _, err := conn.Exec(ctx, "RESET ROLE").ReadAll(); err != nil {
		return held, "", travel{}, err
	}
	if restore {
		return held, pinned, values, applySettings(ctx, conn, before)
	}
	return held, pinned, values, nil
}
