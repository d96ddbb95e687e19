package pgtext

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"certa/sqlerr"
)

// CopyFormat is the row format of a COPY in text or CSV form, with its
// options already given their defaults (pgparse.Copy.TextFormat).
type CopyFormat struct {
	CSV       bool
	Delimiter byte   // tab in text, ',' in CSV
	Null      string // `\N` in text, "" in CSV
	Header    bool   // the first line names the columns
	// HeaderMatch: the first line must name the columns as the COPY does
	// (COPY FROM only).
	HeaderMatch bool
	Quote       byte // CSV only; '"'
	Escape      byte // CSV only; the quote unless given
	// CSV only, per column of the COPY: ForceQuote quotes every value that
	// is not NULL (COPY TO); ForceNotNull reads a field equal to Null as
	// that string, ForceNull reads one as NULL even quoted (COPY FROM).
	ForceQuote, ForceNotNull, ForceNull []bool
}

// CopyReader reads the rows of COPY FROM STDIN data as PostgreSQL does:
// fields are nil for NULL.
type CopyReader struct {
	r       *bufio.Reader
	f       CopyFormat
	columns []string // the COPY's column names, for errors and HEADER MATCH
	line    int      // lines read so far
	crlf    int      // 0 undecided, 1 lines end in \r\n, -1 in \n
	done    bool
	raw     []byte
}

// NewCopyReader reads rows of len(columns) fields from r in format f.
func NewCopyReader(r io.Reader, f CopyFormat, columns []string) *CopyReader {
	return &CopyReader{r: bufio.NewReaderSize(r, 64<<10), f: f, columns: columns}
}

// Line is the number of the line the last row ended on, for errors
// (PostgreSQL's CONTEXT "COPY t, line N").
func (c *CopyReader) Line() int { return c.line }

// Next returns the next row, or io.EOF after the last one (the end of the
// data, or a line `\.`). Errors are 22P04 for a malformed row, 22021 for
// bytes that are not UTF-8, or the reader's.
func (c *CopyReader) Next() ([]*string, error) {
	for {
		if c.done {
			return nil, io.EOF
		}
		first := c.line == 0
		line, end, err := c.readLine()
		if err != nil {
			return nil, err
		}
		if end {
			c.done = true
			return nil, io.EOF
		}
		if string(line) == `\.` {
			c.done = true
			return nil, io.EOF
		}
		if !utf8.Valid(line) {
			return nil, invalidUTF8(line)
		}
		var fields []field
		if c.f.CSV {
			fields = c.splitCSV(line)
		} else {
			fields, err = c.splitText(line)
			if err != nil {
				return nil, err
			}
		}
		if first && c.f.Header {
			if c.f.HeaderMatch {
				if err := c.matchHeader(fields); err != nil {
					return nil, err
				}
			}
			continue
		}
		return c.row(fields)
	}
}

// field is one field of a line: its value, whether it was quoted (CSV),
// and whether its raw text was the NULL marker.
type field struct {
	val    string
	quoted bool
	null   bool
}

func (c *CopyReader) row(fields []field) ([]*string, error) {
	if len(fields) > len(c.columns) {
		return nil, sqlerr.New(sqlerr.BadCopyFileFormat, "extra data after last expected column")
	}
	if len(fields) < len(c.columns) {
		return nil, sqlerr.New(sqlerr.BadCopyFileFormat, "missing data for column %q", c.columns[len(fields)])
	}
	row := make([]*string, len(fields))
	for i, f := range fields {
		null := f.null
		if c.f.CSV {
			null = !f.quoted && f.val == c.f.Null
			if i < len(c.f.ForceNotNull) && c.f.ForceNotNull[i] {
				null = false
			}
			if i < len(c.f.ForceNull) && c.f.ForceNull[i] && f.val == c.f.Null {
				null = true
			}
		}
		if !null {
			if !utf8.ValidString(f.val) { // an escape made bytes that are not UTF-8
				return nil, invalidUTF8([]byte(f.val))
			}
			if strings.IndexByte(f.val, 0) >= 0 {
				return nil, sqlerr.New(sqlerr.CharacterNotInRepertoire, "invalid byte sequence for encoding \"UTF8\": 0x00")
			}
			v := f.val
			row[i] = &v
		}
	}
	return row, nil
}

func (c *CopyReader) matchHeader(fields []field) error {
	if len(fields) != len(c.columns) {
		return sqlerr.New(sqlerr.BadCopyFileFormat, "wrong number of fields in header line: got %d, expected %d", len(fields), len(c.columns))
	}
	for i, f := range fields {
		if f.null || f.val != c.columns[i] {
			return sqlerr.New(sqlerr.BadCopyFileFormat, "column name mismatch in header line field %d: got %q, expected %q", i+1, f.val, c.columns[i])
		}
	}
	return nil
}

// readLine returns the next line without its end, or end at the end of
// the data. In text format a backslash takes the next byte with it (an escaped
// newline is data); in CSV a newline inside quotes is data.
func (c *CopyReader) readLine() (line []byte, end bool, err error) {
	c.raw = c.raw[:0]
	inQuote, escaped := false, false
	for {
		b, err := c.r.ReadByte()
		if err == io.EOF {
			if len(c.raw) == 0 {
				return nil, true, nil
			}
			if inQuote {
				return nil, false, sqlerr.New(sqlerr.BadCopyFileFormat, "unterminated CSV quoted field")
			}
			c.line++
			return c.raw, false, nil
		}
		if err != nil {
			return nil, false, err
		}
		switch {
		case escaped:
			escaped = false
		case !c.f.CSV && b == '\\':
			escaped = true
		case c.f.CSV && inQuote && b == c.f.Escape && c.f.Escape != c.f.Quote:
			// An escape inside quotes takes the next byte if it is the
			// quote or the escape.
			if next, err := c.r.Peek(1); err == nil && (next[0] == c.f.Quote || next[0] == c.f.Escape) {
				c.raw = append(c.raw, b)
				b, _ = c.r.ReadByte()
			}
		case c.f.CSV && b == c.f.Quote:
			inQuote = !inQuote
		case b == '\n' && !inQuote:
			c.line++
			if n := len(c.raw); n > 0 && c.raw[n-1] == '\r' {
				if c.crlf < 0 {
					return nil, false, literalCR()
				}
				c.crlf = 1
				return c.raw[:n-1], false, nil
			}
			if c.crlf > 0 {
				return nil, false, sqlerr.New(sqlerr.BadCopyFileFormat, "literal newline found in data")
			}
			c.crlf = -1
			return c.raw, false, nil
		}
		c.raw = append(c.raw, b)
	}
}

func literalCR() error {
	return &sqlerr.Error{Code: sqlerr.BadCopyFileFormat, Message: "literal carriage return found in data",
		Hint: `Use "\r" to represent carriage return.`}
}

// splitText splits a line of text format into its fields, undoing the
// backslash escapes. A field is NULL when its text before unescaping is
// the NULL marker.
func (c *CopyReader) splitText(line []byte) ([]field, error) {
	var fields []field
	var val []byte
	start := 0
	for i := 0; i <= len(line); i++ {
		if i == len(line) || line[i] == c.f.Delimiter {
			raw := string(line[start:i])
			fields = append(fields, field{val: string(val), null: raw == c.f.Null})
			val, start = val[:0], i+1
			continue
		}
		b := line[i]
		if b == '\r' {
			return nil, literalCR()
		}
		if b != '\\' || i+1 == len(line) {
			val = append(val, b)
			continue
		}
		i++
		switch b = line[i]; b {
		case 'b':
			val = append(val, '\b')
		case 'f':
			val = append(val, '\f')
		case 'n':
			val = append(val, '\n')
		case 'r':
			val = append(val, '\r')
		case 't':
			val = append(val, '\t')
		case 'v':
			val = append(val, '\v')
		case 'x':
			n := 0
			for n < 2 && i+1+n < len(line) && isHex(line[i+1+n]) {
				n++
			}
			if n == 0 {
				val = append(val, 'x')
				continue
			}
			v, _ := strconv.ParseUint(string(line[i+1:i+1+n]), 16, 8)
			val = append(val, byte(v))
			i += n
		case '0', '1', '2', '3', '4', '5', '6', '7':
			n := 1
			for n < 3 && i+n < len(line) && line[i+n] >= '0' && line[i+n] <= '7' {
				n++
			}
			v, _ := strconv.ParseUint(string(line[i:i+n]), 8, 16)
			val = append(val, byte(v))
			i += n - 1
		default:
			val = append(val, b)
		}
	}
	return fields, nil
}

func isHex(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'f' || b >= 'A' && b <= 'F'
}

// splitCSV splits a line of CSV into its fields, as PostgreSQL's CSV
// reader does: a quote anywhere in a field opens a quoted part.
func (c *CopyReader) splitCSV(line []byte) []field {
	var fields []field
	var val []byte
	quoted, inQuote := false, false
	for i := 0; i <= len(line); i++ {
		if i == len(line) || !inQuote && line[i] == c.f.Delimiter {
			fields = append(fields, field{val: string(val), quoted: quoted})
			val, quoted = val[:0], false
			continue
		}
		b := line[i]
		switch {
		case inQuote && b == c.f.Escape && i+1 < len(line) && (line[i+1] == c.f.Quote || line[i+1] == c.f.Escape) &&
			(c.f.Escape != c.f.Quote || line[i+1] == c.f.Quote):
			i++
			val = append(val, line[i])
		case b == c.f.Quote:
			inQuote, quoted = !inQuote, true
		default:
			val = append(val, b)
		}
	}
	return fields
}

func invalidUTF8(b []byte) error {
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n <= 1 {
			return sqlerr.New(sqlerr.CharacterNotInRepertoire, "invalid byte sequence for encoding \"UTF8\": 0x%02x", b[0])
		}
		b = b[n:]
	}
	return sqlerr.New(sqlerr.CharacterNotInRepertoire, "invalid byte sequence for encoding \"UTF8\"")
}

// AppendCopyRow appends one row of COPY TO STDOUT data in format f:
// fields (nil for NULL) in their text forms, and the line's end.
func AppendCopyRow(dst []byte, f CopyFormat, fields []*string) []byte {
	for i, v := range fields {
		if i > 0 {
			dst = append(dst, f.Delimiter)
		}
		switch {
		case v == nil:
			dst = append(dst, f.Null...)
		case f.CSV:
			force := i < len(f.ForceQuote) && f.ForceQuote[i]
			dst = appendCSVField(dst, f, *v, force || *v == f.Null || *v == `\.` && len(fields) == 1)
		default:
			dst = appendTextField(dst, f, *v)
		}
	}
	return append(dst, '\n')
}

func appendTextField(dst []byte, f CopyFormat, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch b := s[i]; b {
		case '\\':
			dst = append(dst, `\\`...)
		case '\b':
			dst = append(dst, `\b`...)
		case '\f':
			dst = append(dst, `\f`...)
		case '\n':
			dst = append(dst, `\n`...)
		case '\r':
			dst = append(dst, `\r`...)
		case '\t':
			dst = append(dst, `\t`...)
		case '\v':
			dst = append(dst, `\v`...)
		default:
			if b == f.Delimiter {
				dst = append(dst, '\\')
			}
			dst = append(dst, b)
		}
	}
	return dst
}

func appendCSVField(dst []byte, f CopyFormat, s string, quote bool) []byte {
	if !quote {
		quote = strings.IndexByte(s, f.Delimiter) >= 0 || strings.IndexByte(s, f.Quote) >= 0 ||
			strings.ContainsAny(s, "\r\n") || f.Escape != f.Quote && strings.IndexByte(s, f.Escape) >= 0
	}
	if !quote {
		return append(dst, s...)
	}
	dst = append(dst, f.Quote)
	for i := 0; i < len(s); i++ {
		if s[i] == f.Quote || s[i] == f.Escape {
			dst = append(dst, f.Escape)
		}
		dst = append(dst, s[i])
	}
	return append(dst, f.Quote)
}

// CopyHeader returns the header line of COPY TO in format f.
func CopyHeader(f CopyFormat, columns []string) []byte {
	fields := make([]*string, len(columns))
	for i := range columns {
		fields[i] = &columns[i]
	}
	h := f
	h.ForceQuote = nil
	return AppendCopyRow(nil, h, fields)
}

// CopyContext is PostgreSQL's CONTEXT line of a COPY error: the table
// and the line of the data.
func CopyContext(table string, line int) string {
	return fmt.Sprintf("COPY %s, line %d", table, line)
}
