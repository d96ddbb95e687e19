package replica

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"certa/engine"
	"certa/pgparse"
	"certa/result"
	"certa/sqlerr"
)

// Session settings, as PostgreSQL keeps them: SET inside a transaction
// block is undone when the block rolls back (or rolls back to a savepoint
// taken before it), and SET LOCAL lasts until the block ends, committed
// or not. Outside a block SET LOCAL changes nothing.

// sessionSettings is what SET changes in a session.
type sessionSettings struct {
	consistency string            // "local" or "sync"
	waitFor     uint64            // certa.wait_for: reads wait for this seqno
	settings    map[string]string // other SET parameters, echoed by SHOW
	// statementTimeout bounds each statement's execution (0: none).
	statementTimeout time.Duration
	// defaultModes are the default_transaction_* settings; modes are
	// the block's (isolation.go, readonly.go).
	defaultModes, modes txModes
	// pg are PostgreSQL's run-time parameters the session set, by name,
	// in PostgreSQL's form, for an engine that runs PostgreSQL: passed to
	// every transaction (engine.WithSettings).
	pg map[string]string
}

func (v sessionSettings) clone() sessionSettings {
	v.settings = maps.Clone(v.settings)
	v.pg = maps.Clone(v.pg)
	return v
}

// blockSettings are a block's settings to go back to.
type blockSettings struct {
	atBegin sessionSettings // at ROLLBACK
	// session is what the settings become at COMMIT: the block's SETs
	// without its SET LOCALs.
	session sessionSettings
	// marks are the settings and session at each savepoint, in the order of
	// Session.savepoints.
	marks [][2]sessionSettings
}

// beginSettings starts a block's bookkeeping of settings.
func (s *Session) beginSettings() {
	s.block = &blockSettings{atBegin: s.sessionSettings.clone(), session: s.sessionSettings.clone()}
}

// saveSettings records the settings at a new savepoint.
func (s *Session) saveSettings() {
	s.block.marks = append(s.block.marks, [2]sessionSettings{s.sessionSettings.clone(), s.block.session.clone()})
}

// rollbackSettingsTo returns the settings to those of savepoint i
// (ROLLBACK TO), which stays.
func (s *Session) rollbackSettingsTo(i int) {
	m := s.block.marks[i]
	s.block.marks = s.block.marks[:i+1]
	s.block.session = m[1].clone()
	s.restoreSettings(m[0].clone())
}

// commitSettings ends a block that committed: SET LOCAL values go.
func (s *Session) commitSettings() {
	if s.block != nil {
		s.restoreSettings(s.block.session)
		s.block = nil
	}
}

// rollbackSettings ends a block that rolled back: its SETs are undone.
func (s *Session) rollbackSettings() {
	if s.block != nil {
		s.restoreSettings(s.block.atBegin)
		s.block = nil
	}
}

// restoreSettings makes v the session's settings and tells the client
// about reported parameters whose values change.
func (s *Session) restoreSettings(v sessionSettings) {
	for _, name := range []string{"application_name", "timezone", "intervalstyle"} {
		if old, now := s.settings[name], v.settings[name]; old != now {
			if now == "" {
				now = defaultSettings[name]
			}
			s.report(reportedName[name], now)
		}
	}
	if s.defaultModes.readOnly != v.defaultModes.readOnly {
		s.report("default_transaction_read_only", onOff(v.defaultModes.readOnly))
	}
	s.reportPostgres(s.pg, v.pg)
	s.sessionSettings = v
}

// reportPostgres tells the client about the reported PostgreSQL
// parameters whose values differ between from and to (a parameter not in
// a map has the server's default).
func (s *Session) reportPostgres(from, to map[string]string) {
	for name, reported := range reportedName {
		old, had := from[name]
		now, has := to[name]
		if !had {
			old = s.pgDefaults[name]
		}
		if !has {
			now = s.pgDefaults[name]
		}
		if old != now {
			s.report(reported, now)
		}
	}
}

// settingInTx runs set, a SET of name, in the block's transaction and
// returns the value it left.
func (s *Session) settingInTx(ctx context.Context, set, name string) (string, error) {
	if err := s.tx.Exec(ctx, set, result.Discard); err != nil {
		return "", err
	}
	var b result.Buffer
	if err := s.tx.Exec(ctx, "SELECT pg_catalog.current_setting("+quoteText(name)+")", &b); err != nil {
		return "", err
	}
	if len(b.Rows) == 1 && len(b.Rows[0]) == 1 {
		switch v := b.Rows[0][0].(type) {
		case string:
			return v, nil
		case []byte:
			return string(v), nil
		}
	}
	return "", sqlerr.New(sqlerr.Internal, "certa: setting %s could not be read back", name)
}

// reportedName is the spelling PostgreSQL reports a parameter under.
var reportedName = map[string]string{"application_name": "application_name", "timezone": "TimeZone", "intervalstyle": "IntervalStyle", "datestyle": "DateStyle",
	"default_transaction_read_only": "default_transaction_read_only", "standard_conforming_strings": "standard_conforming_strings"}

func (s *Session) set(ctx context.Context, st statement, w result.Writer) error {
	if len(st.words) > 1 && (st.words[1] == "TRANSACTION" || st.words[1] == "SESSION") {
		if m, ok := pgparse.TransactionModes(st.sql); ok {
			return s.setTxModes(ctx, m, w)
		}
	}
	if s.node.engine.RunsPostgreSQL() {
		// The transaction's modes are the session's (txModes), read
		// below: a backend would check them against its own transaction.
		if ps, ok := pgparse.ParseSet(st.sql); ok && !strings.HasPrefix(ps.Name, "certa.") && ps.Name != "client_encoding" &&
			(ps.Reset || !slices.Contains(shownModes, ps.Name)) {
			return s.setPostgres(ctx, st, ps, w)
		}
	} else if ps, ok := pgparse.ParseSet(st.sql); ok && (ps.Name == "role" || ps.Name == "session_authorization") {
		if err := s.checkOwnRole(ps); err != nil {
			return err
		}
	}
	name, value, local, err := parseSet(st.sql)
	if err != nil {
		return err
	}
	if name == "transaction_isolation" {
		level, err := isolationLevel(name, value)
		if err != nil {
			return err
		}
		if err := s.setTxIsolation(level); err != nil {
			return err
		}
		return w.Complete("SET")
	}
	if name == "transaction_read_only" || name == "transaction_deferrable" {
		b, err := parseBool(name, value)
		if err != nil {
			return err
		}
		if name == "transaction_deferrable" {
			err = s.setTxDeferrable(b)
		} else {
			err = s.setTxReadOnly(ctx, b)
		}
		if err != nil {
			return err
		}
		return w.Complete("SET")
	}
	if local && !s.inBlock {
		warnNoBlock(ctx, "SET LOCAL")
	}
	if err := s.setValue(name, value, local); err != nil {
		return err
	}
	return w.Complete("SET")
}

// warnNoBlock warns, as PostgreSQL does, of a statement (SET LOCAL, SET
// TRANSACTION) that outside a transaction block changes nothing.
func warnNoBlock(ctx context.Context, what string) {
	warn(ctx, sqlerr.NoActiveTransaction, what+" can only be used in transaction blocks")
}

// checkOwnRole refuses a SET ROLE or SET SESSION AUTHORIZATION that
// would make the session another role's, over an engine without roles
// but the client's own (the embedded one's catalogs show that one): as
// PostgreSQL refuses a role that does not exist. Setting its own, NONE or
// DEFAULT changes nothing.
func (s *Session) checkOwnRole(ps pgparse.Set) error {
	if ps.Reset || ps.Value == s.user || ps.Name == "role" && strings.EqualFold(ps.Value, "none") {
		return nil
	}
	e := sqlerr.New(sqlerr.UndefinedObject, "role %q does not exist", ps.Value)
	e.Hint = "The embedded engine has one role, the user the client logged in as; the PostgreSQL engine (--engine postgres) has PostgreSQL's roles."
	return e
}

// setConfig runs SELECT set_config(name, value, is_local) as SET (SET
// LOCAL) runs, and returns what SHOW then answers, as PostgreSQL does.
func (s *Session) setConfig(st statement, w result.Writer) error {
	sc, ok := pgparse.ParseSetConfig(st.sql)
	if !ok {
		return sqlerr.New(sqlerr.Internal, "set_config: statement not understood")
	}
	sc, err := sc.Bind(st.args)
	if err != nil {
		return err
	}
	if sc.Reset {
		sc.Value = ""
	}
	if name := strings.ToLower(sc.Name); !s.node.engine.RunsPostgreSQL() && (name == "role" || name == "session_authorization") {
		if err := s.checkOwnRole(pgparse.Set{Name: name, Value: sc.Value, Reset: sc.Reset}); err != nil {
			return err
		}
	}
	if err := s.setValue(sc.Name, sc.Value, sc.Local); err != nil {
		return err
	}
	shown, err := s.shownValue(strings.ToLower(sc.Name))
	if err != nil {
		return err
	}
	if sc.Local && !s.inBlock && sc.Value != "" {
		// The value held for the statement's own transaction only.
		if shown, err = embeddedSetting(strings.ToLower(sc.Name), sc.Value, false); err != nil {
			return err
		}
	}
	if err := w.Columns([]result.Column{{Name: sc.Column, Type: result.Text}}); err != nil {
		return err
	}
	if err := w.Row([]result.Value{shown}); err != nil {
		return err
	}
	return w.Complete("SELECT 1")
}

// setValue sets a session setting, for the rest of the block if local.
func (s *Session) setValue(name, value string, local bool) error {
	if !s.node.engine.RunsPostgreSQL() {
		shown, err := embeddedSetting(strings.ToLower(name), value, false)
		if err != nil {
			return err
		}
		name, value = strings.ToLower(name), shown
	}
	if local && !s.inBlock {
		// PostgreSQL warns and changes nothing.
		return nil
	}
	report, err := s.sessionSettings.apply(name, value, s.node.cfg.StatementTimeout)
	if err != nil {
		return err
	}
	if report != nil {
		s.report(report[0], report[1])
	}
	if s.block != nil && !local {
		s.block.session.apply(name, value, s.node.cfg.StatementTimeout)
	}
	return nil
}

// apply sets parameter name to value (""; the default) and returns the
// parameter to report to the client, if any.
func (v *sessionSettings) apply(name, value string, defaultTimeout time.Duration) (report *[2]string, err error) {
	switch name {
	case settingConsistency:
		switch l := strings.ToLower(value); l {
		case "local", "sync":
			v.consistency = l
		case "", "default":
			v.consistency = "local"
		default:
			return nil, sqlerr.New(sqlerr.InvalidParameterValue,
				"invalid value for parameter \"certa.consistency\": %q (use 'local' or 'sync')", value)
		}
	case settingWaitFor:
		if value == "" || strings.EqualFold(value, "default") {
			v.waitFor = 0
			break
		}
		n, err := strconv.ParseUint(value, 10, 64)
		if err != nil {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue,
				"invalid value for parameter \"certa.wait_for\": %q (use a seqno from SHOW certa.last_commit_seqno)", value)
		}
		v.waitFor = n
	case settingLastCommit:
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "parameter \"certa.last_commit_seqno\" cannot be changed")
	case "client_encoding":
		if e := strings.ToUpper(strings.ReplaceAll(value, "-", "")); e != "UTF8" && e != "UNICODE" && e != "" && e != "DEFAULT" {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "client_encoding %q is not supported: certa speaks UTF8 only", value)
		}
		return &[2]string{"client_encoding", "UTF8"}, nil
	case "datestyle":
		// Dates go out in ISO form, and only ISO 8601 input is read:
		// the order of day and month changes nothing, another output
		// style is refused.
		if err := checkISODateStyle(value); err != nil {
			return nil, err
		}
		if value != "" {
			value = dateStyle(v.settings[name], value)
		}
		v.settings[name] = value
		return &[2]string{"DateStyle", "ISO, MDY"}, nil
	case "timezone":
		if !utcZone(value) {
			e := sqlerr.New(sqlerr.FeatureNotSupported, "the embedded engine keeps and shows timestamps with time zone in UTC: TimeZone %q is not supported", value)
			e.Hint = "Write times with their offset (2024-01-31 13:45:00+02) and convert them in the client, or run nodes with --engine postgres, which has PostgreSQL's time zones."
			return nil, e
		}
		v.settings[name] = value
		return &[2]string{reportedName[name], value}, nil
	case "application_name", "intervalstyle":
		v.settings[name] = value
		return &[2]string{reportedName[name], value}, nil
	case "default_transaction_isolation":
		level := "read committed"
		if value != "" && !strings.EqualFold(value, "default") {
			if level, err = isolationLevel(name, value); err != nil {
				return nil, err
			}
		}
		v.defaultModes.isolation = level
		v.settings[name] = level
	case "default_transaction_read_only", "default_transaction_deferrable":
		b := false
		if value != "" && !strings.EqualFold(value, "default") {
			if b, err = parseBool(name, value); err != nil {
				return nil, err
			}
		}
		v.defaultModes.setDefault(name, onOff(b))
		v.settings[name] = onOff(b)
		if name == "default_transaction_read_only" { // reported to the client
			return &[2]string{name, onOff(b)}, nil
		}
	case "statement_timeout":
		d := defaultTimeout
		if value != "" && !strings.EqualFold(value, "default") {
			if d, err = parseTimeout(value); err != nil {
				return nil, err
			}
		}
		v.statementTimeout = d
		v.settings[name] = value
	default:
		if strings.HasPrefix(name, "certa.") {
			return nil, sqlerr.New(sqlerr.UndefinedObject, "unrecognized configuration parameter %q", name)
		}
		// Other parameters (client_encoding, application_name, ...) are
		// accepted and remembered for SHOW.
		v.settings[name] = value
	}
	return nil, nil
}

// parseSet parses SET [SESSION|LOCAL] name {TO|=} value and RESET name.
func parseSet(sql string) (name, value string, local bool, err error) {
	if ps, ok := pgparse.ParseSet(sql); ok && ps.Name == "timezone" {
		// SET TIME ZONE 'z', LOCAL, DEFAULT; a number or an interval is
		// written as given.
		value = ps.Value
		if !ps.Reset && value == "" {
			text := strings.TrimRight(strings.TrimSpace(sql), ";")
			value = text // as a whole: no zone's name
			if i := strings.LastIndex(strings.ToUpper(text), " ZONE "); i >= 0 {
				value = text[i+len(" ZONE "):]
			}
		}
		return ps.Name, strings.TrimSpace(value), ps.Local, nil
	}
	if ps, ok := pgparse.ParseSet(sql); ok && !ps.All && (ps.Reset || ps.Items != nil) {
		return ps.Name, flattenSetItems(ps.Name, ps.Items), ps.Local, nil
	}
	f := strings.Fields(strings.TrimRight(strings.TrimSpace(sql), ";"))
	if len(f) >= 2 && strings.EqualFold(f[0], "RESET") {
		return strings.ToLower(f[1]), "", false, nil
	}
	if len(f) >= 2 && (strings.EqualFold(f[1], "SESSION") || strings.EqualFold(f[1], "LOCAL")) {
		local = strings.EqualFold(f[1], "LOCAL")
		f = append(f[:1], f[2:]...)
	}
	if len(f) < 2 {
		return "", "", false, sqlerr.New(sqlerr.SyntaxError, "syntax error in SET: expected SET name TO value")
	}
	rest := strings.Join(f[1:], " ")
	if i := strings.IndexAny(rest, "= "); i >= 0 {
		name = strings.TrimSpace(rest[:i])
		rest = strings.TrimSpace(rest[i:])
		rest = strings.TrimPrefix(rest, "=")
		if len(rest) >= 2 && strings.EqualFold(rest[:2], "TO") && (len(rest) == 2 || rest[2] == ' ') {
			rest = rest[2:]
		}
		value = strings.TrimSpace(rest)
	} else if strings.Contains(strings.ToUpper(rest), "TIME ZONE") {
		return "timezone", "", local, nil
	} else {
		return "", "", false, sqlerr.New(sqlerr.SyntaxError, "syntax error in SET: expected SET name TO value")
	}
	value = strings.Trim(value, "'\"")
	return strings.ToLower(name), value, local, nil
}

// flattenSetItems is the value of SET name TO items, as PostgreSQL
// writes it: a list's items joined with commas, those of a list of names
// (search_path) quoted where they would not read back as one name.
func flattenSetItems(name string, items []string) string {
	if slices.Contains([]string{"search_path", "temp_tablespaces", "local_preload_libraries"}, name) {
		quoted := make([]string, len(items))
		for i, it := range items {
			quoted[i] = pgparse.QuoteIdent(it)
		}
		items = quoted
	}
	return strings.Join(items, ", ")
}

// setPostgres runs a SET or RESET of one of PostgreSQL's parameters, over
// an engine that runs PostgreSQL: PostgreSQL checks it (engine.Setting)
// and says the value it leaves; the session keeps it, with the same block
// rules as its own settings, and the open transaction takes it at once.
func (s *Session) setPostgres(ctx context.Context, st statement, ps pgparse.Set, w result.Writer) error {
	tag := "SET"
	if strings.EqualFold(st.words[0], "RESET") {
		tag = "RESET"
	}
	if ps.Local && !s.inBlock {
		warnNoBlock(ctx, "SET LOCAL") // and changes nothing
		return w.Complete(tag)
	}
	// RESET goes back to the value of the startup packet, as in
	// PostgreSQL, where the pooled backend's RESET would give the
	// server's default.
	sql := st.sql
	startup, fromStartup := s.pgStartup[ps.Name]
	if ps.Reset && !ps.All && fromStartup {
		sql = setConfigSQL(ps.Name, startup, ps.Local)
	}
	if _, reported := reportedName[ps.Name]; reported && !ps.All && !fromStartup {
		if err := s.learnDefault(ctx, ps.Name); err != nil {
			return err
		}
	}
	if ps.All && s.inBlock {
		// Reset in the block's transaction, which a backend that keeps
		// the session's state for good (a prepared statement, a cursor
		// WITH HOLD) commits or rolls back with the block.
		if err := s.beginIfNeeded(ctx); err != nil {
			return err
		}
	}
	var value string
	inTx := s.tx != nil && !ps.All && !slices.Contains(shownModes, ps.Name)
	switch {
	case inTx:
		// Checked in the block, where what it made is seen (SET ROLE to
		// a role made earlier in it).
		v, err := s.settingInTx(ctx, sql, ps.Name)
		if err != nil {
			return err
		}
		value = v
	case !ps.All:
		ectx := s.engineCtx(ctx)
		if s.inBlock {
			ectx = engine.WithinBlock(ectx)
		}
		v, err := s.es.Setting(ectx, sql, ps.Name)
		if err != nil {
			return err
		}
		value = v
	case s.tx == nil:
		// Outside a block, such a backend resets them at once, back to
		// the startup packet's.
		all := []string{sql}
		for name, value := range s.pgStartup {
			all = append(all, setConfigSQL(name, value, false))
		}
		if _, err := s.es.Setting(s.engineCtx(ctx), strings.Join(all, "; "), "search_path"); err != nil {
			return err
		}
	}
	if ps.Name == "transaction_read_only" || ps.Name == "transaction_deferrable" {
		// The block's, not the session's: SET TRANSACTION.
		var err error
		if ps.Name == "transaction_deferrable" {
			err = s.setTxDeferrable(value == "on")
		} else {
			err = s.setTxReadOnly(ctx, value == "on")
		}
		if err != nil {
			return err
		}
		return w.Complete(tag)
	}
	if ps.Name == "transaction_isolation" {
		if err := s.setTxIsolation(value); err != nil {
			return err
		}
		return w.Complete(tag)
	}
	if s.tx != nil && !inTx {
		if err := s.tx.Exec(ctx, sql, result.Discard); err != nil {
			return err
		}
		if ps.All {
			for name, value := range s.pgStartup {
				if err := s.tx.Exec(ctx, setConfigSQL(name, value, false), result.Discard); err != nil {
					return err
				}
			}
		}
	}
	before := s.pg
	change := func(v *sessionSettings) {
		switch {
		case ps.All:
			v.pg = maps.Clone(s.pgStartup)
		case ps.Reset && !fromStartup:
			delete(v.pg, ps.Name)
		default:
			if v.pg == nil {
				v.pg = map[string]string{}
			}
			v.pg[ps.Name] = value
		}
		if ps.Name == "statement_timeout" {
			// certa's own timer too (PostgreSQL's form: 0, 5s, 1min...).
			v.apply(ps.Name, pgTimeout(value, ps.Reset), s.node.cfg.StatementTimeout)
		}
		if ps.All {
			value = v.pg[ps.Name]
		}
		if ps.All {
			for _, name := range defaultModeSettings {
				v.defaultModes.setDefault(name, v.pg[name])
			}
		} else {
			v.defaultModes.setDefault(ps.Name, value)
		}
	}
	change(&s.sessionSettings)
	if s.block != nil && !ps.Local {
		change(&s.block.session)
	}
	if ps.All {
		s.reportPostgres(before, s.pg)
	} else if name, ok := reportedName[ps.Name]; ok {
		s.report(name, value)
	}
	return w.Complete(tag)
}

// learnDefault records the server's default of reported parameter name,
// before the session first changes it (reportPostgres tells the client
// when it comes back to it).
func (s *Session) learnDefault(ctx context.Context, name string) error {
	if _, ok := s.pgDefaults[name]; ok {
		return nil
	}
	v, err := s.node.engine.Setting(s.engineCtx(ctx), "RESET "+name, name)
	if err != nil {
		return err
	}
	if s.pgDefaults == nil {
		s.pgDefaults = map[string]string{}
	}
	s.pgDefaults[name] = v
	return nil
}

// setConfigSQL is the statement that sets name to value as the startup
// packet and set_config do (a list such as search_path's "a, b" is two
// names).
func setConfigSQL(name, value string, local bool) string {
	return "SELECT pg_catalog.set_config(" + quoteText(name) + ", " + quoteText(value) + ", " + strconv.FormatBool(local) + ")"
}

// pgTimeout converts PostgreSQL's form of statement_timeout for the
// session's own (apply): "" is the node's default.
func pgTimeout(value string, reset bool) string {
	if reset {
		return ""
	}
	return value
}

// utcZone reports whether value, a TimeZone setting, is UTC by any of its
// names or offsets (or the default).
func utcZone(value string) bool {
	v := strings.ToLower(strings.TrimSpace(value))
	if rest, ok := strings.CutPrefix(v, "interval"); ok {
		// SET TIME ZONE INTERVAL '+00:00' HOUR TO MINUTE (Sequelize's).
		v, _, _ = strings.Cut(strings.TrimSpace(rest), " ")
	}
	v = strings.Trim(v, `'"`)
	switch v {
	case "", "default", "local", "utc", "etc/utc", "gmt", "etc/gmt", "z", "zulu", "etc/zulu", "uct", "etc/uct",
		"universal", "etc/universal", "greenwich", "etc/greenwich", "gmt0", "etc/gmt0", "gmt+0", "gmt-0", "etc/gmt+0", "etc/gmt-0":
		return true
	}
	// A numeric offset of zero: 0, +00, -00:00, 0.0.
	return strings.Trim(v, "+-0:.") == "" && strings.ContainsRune(v, '0')
}

// dateStyle is DateStyle after setting value (checkISODateStyle took it)
// on current (its value, "" for the default), as PostgreSQL writes it:
// the output style, then the order of day and month, each kept from
// current where value does not name it.
func dateStyle(current, value string) string {
	order := "MDY"
	if _, o, ok := strings.Cut(current, ", "); ok {
		order = o
	}
	for _, part := range strings.Split(value, ",") {
		switch strings.ToLower(strings.Trim(strings.TrimSpace(part), `'"`)) {
		case "ymd":
			order = "YMD"
		case "dmy", "euro", "european":
			order = "DMY"
		case "mdy", "us", "noneuro", "noneuropean", "default":
			order = "MDY"
		}
	}
	return "ISO, " + order
}

// checkISODateStyle refuses a DateStyle whose output style is not ISO,
// the only one the embedded engine writes.
func checkISODateStyle(value string) error {
	for _, part := range strings.Split(value, ",") {
		switch strings.ToLower(strings.Trim(strings.TrimSpace(part), `'"`)) {
		case "iso", "ymd", "dmy", "mdy", "euro", "european", "us", "noneuro", "noneuropean", "default", "":
		case "sql", "postgres", "german":
			e := sqlerr.New(sqlerr.FeatureNotSupported, "the embedded engine writes dates and times in ISO 8601 form: DateStyle %q is not supported", value)
			e.Hint = "SET DateStyle = 'ISO', or run nodes with --engine postgres, which has PostgreSQL's date styles."
			return e
		default:
			return sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter \"DateStyle\": %q", value)
		}
	}
	return nil
}

// Startup applies the run-time parameters of the client's startup packet
// (pgwire.Backend.NewSession), as PostgreSQL does at connection: they
// become the session's values, as if SET, and a bad one fails the
// connection. Over an engine that runs PostgreSQL, PostgreSQL reads each
// as set_config does (a list such as search_path's "a, b" is two names)
// and says its value.
func (s *Session) Startup(ctx context.Context, settings [][2]string) error {
	for _, p := range settings {
		name, value := strings.ToLower(p[0]), p[1]
		if s.node.engine.RunsPostgreSQL() && !strings.HasPrefix(name, "certa.") {
			v, err := s.es.Setting(s.engineCtx(ctx), setConfigSQL(name, value, false), name)
			if err != nil {
				return err
			}
			if s.pg == nil {
				s.pg = map[string]string{}
			}
			s.pg[name] = v
			s.defaultModes.setDefault(name, v)
			if name == "statement_timeout" {
				s.sessionSettings.apply(name, v, s.node.cfg.StatementTimeout)
			}
			if s.pgStartup == nil {
				s.pgStartup = map[string]string{}
			}
			s.pgStartup[name] = v
			if reported, ok := reportedName[name]; ok {
				s.report(reported, v)
			}
			continue
		}
		value, err := embeddedSetting(name, value, true)
		if err != nil {
			return err
		}
		report, err := s.sessionSettings.apply(name, value, s.node.cfg.StatementTimeout)
		if err != nil {
			return err
		}
		if report != nil {
			s.report(report[0], report[1])
		}
	}
	return nil
}

// quoteText quotes s as a string constant.
func quoteText(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
