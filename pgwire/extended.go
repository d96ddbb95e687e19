package pgwire

import (
	"github.com/jackc/pgx/v5/pgproto3"

	"certa/result"
	"certa/sqlerr"
)

// The extended query protocol: Parse makes a prepared statement, Bind a
// portal (a statement with its parameter values and result formats),
// Execute runs a portal. Each Execute runs as the session's Execute does:
// in the open transaction block, else as its own transaction.

// SQLSTATEs of the extended protocol.
const (
	codeDuplicatePreparedStatement = "42P05"
	codeDuplicateCursor            = "42P03"
	codeInvalidSQLStatementName    = "26000"
	codeInvalidCursorName          = "34000"
)

// preparedStmt is a parsed statement.
type preparedStmt struct {
	sql       string
	paramOIDs []uint32        // as told to the client
	cols      []result.Column // nil: no result set; Unknown types are sent as text
}

// portal is a bound statement.
type portal struct {
	stmt    *preparedStmt
	args    []any
	formats []int16 // result format codes as Bind gave them

	// told is the column types the client was told by a Describe (nil:
	// not described, the session's types are used).
	told []result.Type
	// res holds the result once the portal ran ahead of its Execute (a
	// Describe needed its column types, or Execute asked for a row limit).
	res  *result.Buffer
	pos  int  // rows of res already sent
	done bool // ran to completion
}

// handleExtended processes one extended-protocol message; false ends the
// connection.
func (c *conn) handleExtended(msg pgproto3.FrontendMessage) bool {
	var err error
	switch m := msg.(type) {
	case *pgproto3.Parse:
		err = c.parse(m)
	case *pgproto3.Bind:
		err = c.bind(m)
	case *pgproto3.Describe:
		err = c.describe(m)
	case *pgproto3.Execute:
		err = c.execute(m)
	case *pgproto3.Close:
		if m.ObjectType == 'S' {
			delete(c.stmts, m.Name)
		} else {
			delete(c.portals, m.Name)
		}
		err = c.send(&pgproto3.CloseComplete{})
	}
	if !c.endCopy() {
		return false
	}
	if err != nil && c.writeErr == nil {
		c.sendError("ERROR", sqlerr.As(err))
		c.ignoreTillSync = true
	}
	return true
}

// sync ends an extended-protocol batch. Portals do not outlive their
// transaction; outside a transaction block that is now.
func (c *conn) sync() {
	if c.sess.TxStatus() == 'I' {
		clear(c.portals)
	}
	c.readyForQuery()
}

func (c *conn) parse(m *pgproto3.Parse) error {
	if m.Name != "" && c.stmts[m.Name] != nil {
		return sqlerr.New(codeDuplicatePreparedStatement, "prepared statement %q already exists", m.Name)
	}
	params, cols, err := c.sess.Describe(c.ctx, m.Query)
	if err != nil {
		return err
	}
	n := max(len(params), len(m.ParameterOIDs))
	oids := make([]uint32, n)
	for i := range oids {
		if i < len(m.ParameterOIDs) && m.ParameterOIDs[i] != 0 {
			oids[i] = m.ParameterOIDs[i]
		} else if i < len(params) {
			oids[i] = params[i].OID()
		} else {
			oids[i] = result.Text.OID()
		}
	}
	if c.stmts == nil {
		c.stmts = make(map[string]*preparedStmt)
		c.portals = make(map[string]*portal)
	}
	c.stmts[m.Name] = &preparedStmt{sql: m.Query, paramOIDs: oids, cols: cols}
	return c.send(&pgproto3.ParseComplete{})
}

func (c *conn) bind(m *pgproto3.Bind) error {
	st := c.stmts[m.PreparedStatement]
	if st == nil {
		return sqlerr.New(codeInvalidSQLStatementName, "prepared statement %q does not exist", m.PreparedStatement)
	}
	if m.DestinationPortal != "" && c.portals[m.DestinationPortal] != nil {
		return sqlerr.New(codeDuplicateCursor, "portal %q already exists", m.DestinationPortal)
	}
	if len(m.Parameters) != len(st.paramOIDs) {
		return sqlerr.New(sqlerr.ProtocolViolation, "bind message supplies %d parameters, but prepared statement %q requires %d",
			len(m.Parameters), m.PreparedStatement, len(st.paramOIDs))
	}
	if err := checkFormats("parameter", len(m.ParameterFormatCodes), len(m.Parameters)); err != nil {
		return err
	}
	if st.cols != nil {
		if err := checkFormats("result", len(m.ResultFormatCodes), len(st.cols)); err != nil {
			return err
		}
	}
	args := make([]any, len(m.Parameters))
	raw := false
	if r, ok := c.sess.(RawParams); ok {
		raw = r.RawParams()
	}
	for i, data := range m.Parameters {
		format := formatAt(m.ParameterFormatCodes, i)
		if raw {
			if data != nil {
				args[i] = result.WireParam{OID: st.paramOIDs[i], Format: format, Data: append([]byte(nil), data...)}
			}
			continue
		}
		v, err := decodeParam(st.paramOIDs[i], format, data)
		if err != nil {
			return err
		}
		args[i] = v
	}
	c.portals[m.DestinationPortal] = &portal{stmt: st, args: args, formats: m.ResultFormatCodes}
	return c.send(&pgproto3.BindComplete{})
}

// checkFormats checks a Bind's format codes: none (all text), one (for
// all) or one per value.
func checkFormats(what string, formats, values int) error {
	if formats > 1 && formats != values {
		return sqlerr.New(sqlerr.ProtocolViolation, "bind message has %d %s formats but %d %ss", formats, what, values, what)
	}
	return nil
}

func formatAt(formats []int16, i int) int16 {
	switch len(formats) {
	case 0:
		return 0
	case 1:
		return formats[0]
	}
	return formats[i]
}

func (c *conn) describe(m *pgproto3.Describe) error {
	if m.ObjectType == 'S' {
		st := c.stmts[m.Name]
		if st == nil {
			return sqlerr.New(codeInvalidSQLStatementName, "prepared statement %q does not exist", m.Name)
		}
		if err := c.send(&pgproto3.ParameterDescription{ParameterOIDs: st.paramOIDs}); err != nil {
			return err
		}
		return c.sendRowDescription(st.cols, nil)
	}
	p := c.portals[m.Name]
	if p == nil {
		return sqlerr.New(codeInvalidCursorName, "portal %q does not exist", m.Name)
	}
	cols := p.stmt.cols
	for _, col := range cols {
		if col.Type == result.Unknown && p.res == nil && !p.done {
			// Only running it shows the types: run it now, send the
			// rows at Execute.
			if err := c.runAhead(p); err != nil {
				return err
			}
		}
	}
	if p.res != nil {
		cols = p.res.Cols
	}
	if cols != nil {
		p.told = make([]result.Type, len(cols))
		for i, col := range cols {
			p.told[i] = textIfUnknown(col.Type)
		}
	}
	return c.sendRowDescription(cols, p.formats)
}

func textIfUnknown(t result.Type) result.Type {
	if t == result.Unknown {
		return result.Text
	}
	return t
}

func (c *conn) sendRowDescription(cols []result.Column, formats []int16) error {
	if cols == nil {
		return c.send(&pgproto3.NoData{})
	}
	fields := make([]pgproto3.FieldDescription, len(cols))
	for i, col := range cols {
		oid, size := fieldType(col)
		fields[i] = pgproto3.FieldDescription{
			Name: []byte(col.Name), DataTypeOID: oid, DataTypeSize: size,
			TypeModifier: col.WireMod(), Format: formatAt(formats, i),
		}
	}
	return c.send(&pgproto3.RowDescription{Fields: fields})
}

// runAhead runs p to completion into p.res.
func (c *conn) runAhead(p *portal) error {
	res := &result.Buffer{TakesWire: true, Formats: p.formats}
	err := c.executeStatement(p, res)
	p.done = true
	if err != nil {
		return err
	}
	p.res = res
	return nil
}

func (c *conn) execute(m *pgproto3.Execute) error {
	p := c.portals[m.Portal]
	if p == nil {
		return sqlerr.New(codeInvalidCursorName, "portal %q does not exist", m.Portal)
	}
	if p.res == nil && !p.done && m.MaxRows == 0 {
		// The usual case: stream the rows as they come.
		err := c.executeStatement(p, &portalWriter{c: c, p: p})
		p.done = true
		return err
	}
	if p.res == nil && !p.done {
		if err := c.runAhead(p); err != nil {
			return err
		}
	}
	if p.res == nil {
		return sqlerr.New(codeInvalidCursorName, "portal %q has already run", m.Portal)
	}
	return c.sendBuffered(p, int(m.MaxRows))
}

// executeStatement runs p's statement as the session's Execute, under a
// context a cancel request can end.
func (c *conn) executeStatement(p *portal, w result.Writer) error {
	ctx, done := c.statementContext()
	defer done()
	if err := c.sess.Execute(ctx, p.stmt.sql, p.args, w); err != nil {
		return statementError(ctx, err)
	}
	return nil
}

// sendBuffered sends up to limit (0: all) of p's remaining rows, then
// PortalSuspended if rows remain, else the command's completion.
func (c *conn) sendBuffered(p *portal, limit int) error {
	r := p.res
	if r.IsEmpty {
		return c.send(&pgproto3.EmptyQueryResponse{})
	}
	w := &portalWriter{c: c, p: p}
	if r.Cols != nil {
		w.setColumns(r.Cols)
	}
	for sent := 0; p.pos < len(r.Rows) && (limit <= 0 || sent < limit); sent++ {
		if err := w.Row(r.Rows[p.pos]); err != nil {
			return err
		}
		p.pos++
	}
	if p.pos < len(r.Rows) {
		return c.send(&pgproto3.PortalSuspended{})
	}
	return c.send(&pgproto3.CommandComplete{CommandTag: []byte(r.Tag)})
}

// portalWriter sends a portal's rows (no RowDescription: Describe sends
// that) in the portal's result formats.
type portalWriter struct {
	c     *conn
	p     *portal
	types []result.Type
	enc   rowEncoder
}

func (w *portalWriter) setColumns(cols []result.Column) error {
	w.types = w.p.told
	if w.types == nil && w.p.stmt.cols != nil && len(w.p.stmt.cols) == len(cols) {
		w.types = make([]result.Type, len(cols))
		for i, col := range w.p.stmt.cols {
			w.types[i] = textIfUnknown(col.Type)
		}
	}
	if w.types == nil {
		w.types = make([]result.Type, len(cols))
		for i, col := range cols {
			w.types[i] = textIfUnknown(col.Type)
		}
	}
	if len(w.types) != len(cols) {
		return sqlerr.New(sqlerr.FeatureNotSupported, "cached plan must not change result type (the table changed since the statement was prepared)")
	}
	return checkFormats("result", len(w.p.formats), len(cols))
}

func (w *portalWriter) Columns(cols []result.Column) error { return w.setColumns(cols) }

// WireFormats: Wire values in the portal's result formats.
func (w *portalWriter) WireFormats() ([]int16, bool) { return w.p.formats, true }

func (w *portalWriter) Row(values []result.Value) error {
	if len(values) != len(w.types) {
		return misuse("row has %d values for %d columns", len(values), len(w.types))
	}
	vals, err := w.enc.encode(values, func(dst []byte, i int, v result.Value) ([]byte, error) {
		if dst, ok := appendWire(dst, v); ok {
			return dst, nil
		}
		return appendValue(dst, w.types[i], formatAt(w.p.formats, i), v)
	})
	if err != nil {
		return err
	}
	return w.c.send(&pgproto3.DataRow{Values: vals})
}

func (w *portalWriter) Complete(tag string) error {
	return w.c.send(&pgproto3.CommandComplete{CommandTag: []byte(tag)})
}

func (w *portalWriter) Empty() error { return w.c.send(&pgproto3.EmptyQueryResponse{}) }
