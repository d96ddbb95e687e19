package pgbinary

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"

	"certa/sqlerr"
)

// copySignature starts COPY's binary format.
var copySignature = []byte("PGCOPY\n\xff\r\n\x00")

// CopyReader reads the rows of COPY FROM STDIN data in PostgreSQL's binary
// format: fields in their binary forms, nil for NULL.
type CopyReader struct {
	r       *bufio.Reader
	columns int
	header  bool // read
	done    bool
	row     int // rows read so far, for errors
}

// NewCopyReader reads rows of columns fields from r.
func NewCopyReader(r io.Reader, columns int) *CopyReader {
	return &CopyReader{r: bufio.NewReaderSize(r, 64<<10), columns: columns}
}

// Line is the number of the row read last (PostgreSQL's CONTEXT counts
// rows of binary data as lines).
func (c *CopyReader) Line() int { return c.row }

func badCopy(format string, args ...any) error {
	return sqlerr.New(sqlerr.BadCopyFileFormat, format, args...)
}

var errUnexpectedEOF = badCopy("unexpected EOF in COPY data")

// Next returns the next row's fields, or io.EOF after the last (the
// trailer, or the end of the data between rows). Malformed data is 22P04.
func (c *CopyReader) Next() ([][]byte, error) {
	if c.done {
		return nil, io.EOF
	}
	if !c.header {
		if err := c.readHeader(); err != nil {
			return nil, err
		}
		c.header = true
	}
	var n int16
	if err := binary.Read(c.r, binary.BigEndian, &n); err != nil {
		if errors.Is(err, io.EOF) {
			c.done = true
			return nil, io.EOF
		}
		return nil, c.readErr(err)
	}
	if n == -1 {
		c.done = true
		if _, err := c.r.ReadByte(); err == nil {
			return nil, badCopy("received copy data after EOF marker")
		}
		return nil, io.EOF
	}
	c.row++
	if int(n) != c.columns {
		return nil, badCopy("row field count is %d, expected %d", n, c.columns)
	}
	fields := make([][]byte, n)
	for i := range fields {
		var size int32
		if err := binary.Read(c.r, binary.BigEndian, &size); err != nil {
			return nil, c.readErr(err)
		}
		if size == -1 {
			continue
		}
		if size < 0 {
			return nil, badCopy("invalid field size")
		}
		fields[i] = make([]byte, size)
		if _, err := io.ReadFull(c.r, fields[i]); err != nil {
			return nil, c.readErr(err)
		}
	}
	return fields, nil
}

func (c *CopyReader) readHeader() error {
	sig := make([]byte, len(copySignature))
	if _, err := io.ReadFull(c.r, sig); err != nil || !bytes.Equal(sig, copySignature) {
		return badCopy("COPY file signature not recognized")
	}
	var flags, ext uint32
	if binary.Read(c.r, binary.BigEndian, &flags) != nil {
		return badCopy("invalid COPY file header (missing flags)")
	}
	if flags&(1<<16) != 0 {
		return sqlerr.New(sqlerr.FeatureNotSupported, "COPY binary data with OIDs is not supported")
	}
	if flags&^(1<<16)&0xffff0000 != 0 {
		return badCopy("unrecognized critical flags in COPY file header")
	}
	if binary.Read(c.r, binary.BigEndian, &ext) != nil {
		return badCopy("invalid COPY file header (missing length)")
	}
	if _, err := io.CopyN(io.Discard, c.r, int64(ext)); err != nil {
		return badCopy("invalid COPY file header (wrong length)")
	}
	return nil
}

// readErr is the error of a row cut short: the reader's own, or 22P04.
func (c *CopyReader) readErr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errUnexpectedEOF
	}
	return err
}
