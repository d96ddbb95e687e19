package sqlite

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
	"strconv"
	"strings"

	"zombiezen.com/go/sqlite"

	"certa/engine"
)

// Checksums implements engine.Engine: one read transaction, every user
// table read in primary-key order, each value hashed with its SQLite type.
func (e *Engine) Checksums(ctx context.Context) (engine.Checksums, error) {
	var sums engine.Checksums
	if e.closed.Load() {
		return sums, errClosed
	}
	c, err := e.pool.get(ctx)
	if err != nil {
		return sums, err
	}
	c.c.SetInterrupt(ctx.Done())
	err = c.checksums(&sums)
	c.c.SetInterrupt(nil)
	if rerr := c.rollback(); err == nil {
		err = rerr
	}
	e.pool.put(c, err != nil)
	if err != nil {
		return sums, mapErr(err)
	}
	return sums, nil
}

func (c *conn) checksums(sums *engine.Checksums) error {
	defer c.internal()()
	if err := c.exec("BEGIN"); err != nil {
		return err
	}
	seqno, _, err := c.queryInt("SELECT seqno FROM _certa_meta")
	if err != nil {
		return err
	}
	sums.Seqno = uint64(seqno)
	tables, err := readCatalogTables(c, "main", firstUserOID)
	if err != nil {
		return err
	}
	for _, t := range tables {
		var order []string
		for _, col := range t.cols {
			if col.pk {
				order = append(order, quoteIdent(col.name))
			}
		}
		cols := "*"
		if len(order) == 0 {
			// Rows of a table without a primary key are known by their
			// rowids (rowid.go): those must agree too.
			names := make([]string, len(t.cols))
			for i, col := range t.cols {
				names[i] = col.name
			}
			if alias := rowidAlias(names); alias != "" {
				order = []string{alias}
				cols = alias + ", *"
			} else {
				for i := range names {
					order = append(order, strconv.Itoa(i+1))
				}
			}
		}
		h := sha256.New()
		rows := int64(0)
		var buf []byte
		err := execResult(c.c, "SELECT "+cols+" FROM "+quoteIdent(t.name)+" ORDER BY "+strings.Join(order, ", "), func(s *sqlite.Stmt) {
			rows++
			buf = buf[:0]
			for i := 0; i < s.ColumnCount(); i++ {
				buf = appendHashValue(buf, s, i)
			}
			h.Write(buf)
		})
		if err != nil {
			return err
		}
		sums.Tables = append(sums.Tables, engine.TableChecksum{Table: t.name, Rows: rows, Sum: hex.EncodeToString(h.Sum(nil))[:16]})
	}
	return nil
}

// appendHashValue appends column i, tagged by type, so that 1 and '1'
// differ.
func appendHashValue(b []byte, s *sqlite.Stmt, i int) []byte {
	t := s.ColumnType(i)
	b = append(b, byte(t))
	switch t {
	case sqlite.TypeInteger:
		b = binary.BigEndian.AppendUint64(b, uint64(s.ColumnInt64(i)))
	case sqlite.TypeFloat:
		b = binary.BigEndian.AppendUint64(b, math.Float64bits(s.ColumnFloat(i)))
	case sqlite.TypeText, sqlite.TypeBlob:
		n := s.ColumnLen(i)
		b = binary.AppendUvarint(b, uint64(n))
		start := len(b)
		b = append(b, make([]byte, n)...)
		s.ColumnBytes(i, b[start:])
	}
	return b
}
