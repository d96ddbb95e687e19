package replica

import (
	"certa/pgtext"
	_ "embed"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"certa/sqlerr"
)

// PostgreSQL's run-time parameters over the embedded engine, which runs
// no PostgreSQL to set them in. A parameter is accepted only where its
// value cannot change what a statement means or returns (the planner's,
// memory, logging, statistics settings), or where the engine does what
// the value says (DateStyle ISO, standard_conforming_strings on...);
// every other one is refused, never accepted and ignored. Values are
// checked and shown as PostgreSQL checks and shows them (units, enums,
// booleans).

//go:embed pgsettings.tsv
var pgSettingsTSV string

// pgParameter is one of PostgreSQL 15's run-time parameters, as
// pg_settings describes it (pgsettings.tsv).
type pgParameter struct {
	name     string // as PostgreSQL spells it: DateStyle
	context  string // who may set it and when: user, superuser, postmaster...
	vartype  string // bool, enum, integer, real, string
	unit     string // of a number without one: ms, s, min, kB, 8kB, B
	category string
	enumvals []string
	min, max float64
	boot     string
}

// pgParameters are PostgreSQL's parameters by lower-case name.
var pgParameters = parsePGSettings(pgSettingsTSV)

func parsePGSettings(tsv string) map[string]*pgParameter {
	out := map[string]*pgParameter{}
	for _, line := range strings.Split(tsv, "\n") {
		f := strings.Split(line, "\t")
		if strings.HasPrefix(line, "#") || len(f) != 9 {
			continue
		}
		p := &pgParameter{name: f[0], context: f[1], vartype: f[2], unit: f[3], category: f[4], boot: f[8]}
		if f[5] != "" {
			p.enumvals = strings.Split(f[5], ",")
		}
		p.min, _ = strconv.ParseFloat(f[6], 64)
		p.max, _ = strconv.ParseFloat(f[7], 64)
		out[strings.ToLower(f[0])] = p
	}
	return out
}

// embeddedOnly are parameters the embedded engine accepts with these
// values only (as SHOW shows them): those it behaves as.
var embeddedOnly = map[string][]string{
	"standard_conforming_strings":      {"on"},
	"bytea_output":                     {"hex"},
	"transform_null_equals":            {"off"},
	"array_nulls":                      {"on"},
	"quote_all_identifiers":            {"off"},
	"backslash_quote":                  {"safe_encoding", "on"},
	"exit_on_error":                    {"off"},
	"extra_float_digits":               {"1", "2", "3"},
	"default_tablespace":               {"", "pg_default"},
	"temp_tablespaces":                 {""},
	"default_table_access_method":      {"heap"},
	"lc_monetary":                      {"C", "POSIX"},
	"lc_numeric":                       {"C", "POSIX"},
	"lc_time":                          {"C", "POSIX"},
	"timezone_abbreviations":           {"Default"},
	"local_preload_libraries":          {""},
	"restrict_nonsystem_relation_kind": {""},
}

// embeddedAny are parameters the embedded engine accepts with any valid
// value: they change no statement's result there (what they govern it
// does not have, or does its own way), or the session handles them
// (settings.go).
var embeddedAny = []string{
	"application_name", "client_encoding", "role", "session_authorization", "datestyle", "timezone", "intervalstyle",
	"default_transaction_isolation", "default_transaction_read_only", "default_transaction_deferrable",
	"transaction_isolation", "transaction_read_only", "transaction_deferrable", "statement_timeout",
	"search_path", "client_min_messages", "escape_string_warning", "synchronize_seqscans",
	"check_function_bodies", "row_security", "xmloption", "xmlbinary", "default_toast_compression",
	"default_text_search_config", "password_encryption", "gin_fuzzy_search_limit", "gin_pending_list_limit",
	"vacuum_failsafe_age", "vacuum_freeze_min_age", "vacuum_freeze_table_age", "vacuum_multixact_failsafe_age",
	"vacuum_multixact_freeze_min_age", "vacuum_multixact_freeze_table_age",
	// Waits the engine's sessions do not have the way PostgreSQL's do:
	// a setting that could only end one sooner changes no result.
	"lock_timeout", "idle_in_transaction_session_timeout", "idle_session_timeout",
}

// embeddedAnyCategories are pg_settings categories whose parameters
// change how PostgreSQL runs a statement, never its result.
var embeddedAnyCategories = []string{"Query Tuning", "Resource Usage", "Reporting and Logging", "Statistics",
	"Autovacuum", "Developer Options", "Connections and Authentication / Connection Settings", "Write-Ahead Log / Settings"}

// embeddedSetting checks that the embedded engine can take parameter
// name (lower case) set to value ("" for its default) by SET, set_config
// or a startup packet (atStartup), and returns the value as SHOW shows
// it. certa's own parameters and custom ones (a name with a dot) pass
// as they are.
func embeddedSetting(name, value string, atStartup bool) (string, error) {
	known, ok := pgParameters[name]
	if !ok {
		if strings.Contains(name, ".") {
			return value, nil
		}
		return "", sqlerr.New(sqlerr.UndefinedObject, "unrecognized configuration parameter %q", name)
	}
	// Messages name it as the client wrote it, as PostgreSQL's do.
	p := *known
	p.name = name
	if err := p.settable(atStartup); err != nil {
		return "", err
	}
	if value == "" {
		return "", nil
	}
	shown, err := p.parse(value)
	if err != nil {
		return "", err
	}
	switch {
	case name == "search_path":
		return shown, checkSearchPath(value)
	case embeddedOnly[name] != nil:
		if !slices.Contains(embeddedOnly[name], shown) {
			e := sqlerr.New(sqlerr.FeatureNotSupported, "the embedded engine (SQLite) supports %s = %s only", p.name, quoteAll(embeddedOnly[name]))
			e.Hint = "The PostgreSQL engine (--engine postgres) has PostgreSQL's settings."
			return "", e
		}
	case slices.Contains(embeddedAny, name):
	case slices.ContainsFunc(embeddedAnyCategories, func(c string) bool { return strings.HasPrefix(p.category, c) }):
	default:
		e := sqlerr.New(sqlerr.FeatureNotSupported, "parameter %q is not supported by the embedded engine (SQLite)", p.name)
		e.Hint = "The PostgreSQL engine (--engine postgres) has PostgreSQL's settings."
		return "", e
	}
	return shown, nil
}

// quoteAll lists values as 'a' or 'b'.
func quoteAll(values []string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = quoteText(v)
	}
	return strings.Join(q, " or ")
}

// checkSearchPath refuses a search_path naming a schema the embedded
// engine does not have: it has public (and the system's), so names
// would not be looked up where the client means.
func checkSearchPath(value string) error {
	for _, schema := range splitNameList(value) {
		switch schema {
		case "", "public", "pg_catalog", "$user", "pg_temp", "information_schema":
		default:
			e := sqlerr.New(sqlerr.FeatureNotSupported, "the embedded engine (SQLite) has one schema, public: search_path %q names %q", value, schema)
			e.Hint = "The PostgreSQL engine (--engine postgres) has schemas."
			return e
		}
	}
	return nil
}

// splitNameList splits a list of names as PostgreSQL's SplitIdentifierString
// does: separated by commas, each double-quoted (kept as written) or not
// (folded to lower case).
func splitNameList(list string) []string {
	var out []string
	rest := strings.TrimSpace(list)
	for rest != "" {
		var name string
		if strings.HasPrefix(rest, `"`) {
			var b strings.Builder
			i := 1
			for i < len(rest) {
				if rest[i] == '"' {
					if i+1 < len(rest) && rest[i+1] == '"' {
						b.WriteByte('"')
						i += 2
						continue
					}
					i++
					break
				}
				b.WriteByte(rest[i])
				i++
			}
			name, rest = b.String(), rest[i:]
		} else {
			end := strings.IndexByte(rest, ',')
			if end < 0 {
				end = len(rest)
			}
			name, rest = strings.ToLower(strings.TrimSpace(rest[:end])), rest[end:]
		}
		out = append(out, name)
		rest = strings.TrimSpace(rest)
		rest = strings.TrimSpace(strings.TrimPrefix(rest, ","))
	}
	return out
}

// settable refuses a parameter the client cannot set, with PostgreSQL's
// message: one fixed when the server started, or a superuser's (the
// embedded engine's user is not one).
func (p *pgParameter) settable(atStartup bool) error {
	switch p.context {
	case "internal":
		return sqlerr.New(sqlerr.CantChangeRuntimeParam, "parameter %q cannot be changed", p.name)
	case "postmaster":
		return sqlerr.New(sqlerr.CantChangeRuntimeParam, "parameter %q cannot be changed without restarting the server", p.name)
	case "sighup":
		return sqlerr.New(sqlerr.CantChangeRuntimeParam, "parameter %q cannot be changed now", p.name)
	case "superuser":
		return sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied to set parameter %q", p.name)
	case "superuser-backend":
		if atStartup {
			return sqlerr.New(sqlerr.InsufficientPrivilege, "permission denied to set parameter %q", p.name)
		}
		fallthrough
	case "backend":
		if !atStartup {
			return sqlerr.New(sqlerr.CantChangeRuntimeParam, "parameter %q cannot be set after connection start", p.name)
		}
	}
	return nil
}

// parse checks value as PostgreSQL does for p's type and returns it as
// SHOW shows it.
func (p *pgParameter) parse(value string) (string, error) {
	switch p.vartype {
	case "bool":
		b, ok := pgtext.ParseBool(value)
		if !ok {
			return "", sqlerr.New(sqlerr.InvalidParameterValue, "parameter %q requires a Boolean value", p.name)
		}
		return onOff(b), nil
	case "enum":
		for _, v := range p.enumvals {
			if strings.EqualFold(v, strings.TrimSpace(value)) {
				return v, nil
			}
		}
		e := sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter %q: %q", p.name, value)
		e.Hint = "Available values: " + strings.Join(p.enumvals, ", ") + "."
		return "", e
	case "integer", "real":
		n, err := p.number(value)
		if err != nil {
			return "", err
		}
		return p.show(n), nil
	}
	return value, nil
}

// Units of memory (in bytes) and time (in milliseconds) a number may
// carry, as PostgreSQL spells them.
var (
	memoryUnits = []unitSize{{"TB", 1 << 40}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"kB", 1 << 10}, {"B", 1}}
	timeUnits   = []unitSize{{"d", 86400000}, {"h", 3600000}, {"min", 60000}, {"s", 1000}, {"ms", 1}, {"us", 0.001}}
)

type unitSize struct {
	name string
	size float64
}

// units returns the unit list of p's unit and the size of that unit.
func (p *pgParameter) units() ([]unitSize, float64) {
	switch p.unit {
	case "8kB":
		return memoryUnits, 8192
	case "kB", "B", "MB":
		return memoryUnits, map[string]float64{"B": 1, "kB": 1 << 10, "MB": 1 << 20}[p.unit]
	case "ms", "s", "min":
		return timeUnits, map[string]float64{"ms": 1, "s": 1000, "min": 60000}[p.unit]
	}
	return nil, 1
}

// number reads value, a number with an optional unit, in p's unit.
func (p *pgParameter) number(value string) (float64, error) {
	v := strings.TrimSpace(value)
	i := strings.IndexFunc(v, func(r rune) bool { return !strings.ContainsRune("0123456789+-.eE", r) })
	num, unit := v, ""
	if i >= 0 {
		num, unit = v[:i], strings.TrimSpace(v[i:])
	}
	n, err := strconv.ParseFloat(num, 64)
	units, base := p.units()
	if err == nil && unit != "" {
		k := slices.IndexFunc(units, func(u unitSize) bool { return u.name == unit })
		if k < 0 {
			err = fmt.Errorf("unit %q", unit)
		} else {
			n = n * units[k].size / base
		}
	}
	if err == nil && p.vartype == "integer" {
		n = math.Round(n)
	}
	if err != nil || math.IsNaN(n) || math.IsInf(n, 0) {
		e := sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter %q: %q", p.name, value)
		if units != nil {
			names := make([]string, 0, len(units))
			for k := len(units) - 1; k >= 0; k-- {
				names = append(names, `"`+units[k].name+`"`)
			}
			e.Hint = "Valid units for this parameter are " + strings.Join(names[:len(names)-1], ", ") + ", and " + names[len(names)-1] + "."
		}
		return 0, e
	}
	if p.vartype == "integer" && (n > math.MaxInt32 || n < math.MinInt32) {
		e := sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter %q: %q", p.name, value)
		e.Hint = "Value exceeds integer range."
		return 0, e
	}
	if n < p.min || n > p.max {
		unit := ""
		if p.unit != "" {
			unit = " " + p.unit
		}
		return 0, sqlerr.New(sqlerr.InvalidParameterValue, "%s%s is outside the valid range for parameter %q (%s .. %s)",
			formatNumber(n), unit, p.name, formatNumber(p.min), formatNumber(p.max))
	}
	return n, nil
}

// show writes n, in p's unit, as SHOW does: in the largest unit it is a
// whole number of.
func (p *pgParameter) show(n float64) string {
	units, base := p.units()
	if units == nil || n == 0 || n == -1 && p.vartype == "integer" {
		return formatNumber(n)
	}
	// The smallest unit shown is the parameter's own, but kB for blocks
	// and microseconds for a real number of milliseconds.
	least := base
	switch {
	case p.vartype == "real":
		least = 0
	case units[0].name == "TB":
		least = min(base, 1024)
	}
	for _, u := range units {
		if u.size < least {
			break
		}
		// Whole within rounding, as PostgreSQL accepts (80.1ms is
		// 80100.00000000001us in binary).
		if v := n * base / u.size; v == math.Trunc(v) || math.Abs(math.Round(v)/v-1) <= 1e-8 {
			return formatNumber(math.Round(v)) + u.name
		}
	}
	return formatNumber(n) + p.unit
}

func formatNumber(n float64) string { return strconv.FormatFloat(n, 'f', -1, 64) }

// defaultShown is parameter name's value before a client sets it, as
// SHOW shows it.
func defaultShown(name string) string {
	if v, ok := defaultSettings[name]; ok {
		return v
	}
	p, ok := pgParameters[name]
	if !ok {
		return ""
	}
	if p.vartype == "integer" || p.vartype == "real" {
		if n, err := strconv.ParseFloat(p.boot, 64); err == nil {
			return p.show(n)
		}
	}
	return p.boot
}
