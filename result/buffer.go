package result

import (
	"errors"
	"io"
)

// Buffer is a Writer that keeps what it is given, to be replayed to
// another Writer later (a result held back until its transaction commits)
// or read directly.
type Buffer struct {
	Cols    []Column // nil if Columns was not called
	Rows    [][]Value
	Tag     string
	Done    bool // Complete was called
	IsEmpty bool // Empty was called

	// TakesWire and Formats make the Buffer a WireWriter, for a result
	// to be replayed to one (BufferFor).
	TakesWire bool
	Formats   []int16
	// Simple makes it a SimpleQueryWriter that says so, for a result to
	// be replayed to one (BufferFor).
	Simple bool

	// copier, if w of BufferFor is one: COPY data cannot be held back.
	copier Copier
	copied bool
}

var _ WireWriter = (*Buffer)(nil)

// BufferFor returns an empty Buffer that takes Wire values, in the same
// formats, if w does, writes a simple Query's results if w does, and
// carries COPY data to and from w's client at once
// if w is a Copier (only the rest is held back): what it keeps can be
// replayed to w.
func BufferFor(w Writer) *Buffer {
	formats, ok := WireFormats(w)
	c, _ := w.(Copier)
	return &Buffer{TakesWire: ok, Formats: formats, Simple: SimpleQuery(w), copier: c}
}

// ErrCopyOnce is the error of a second COPY through one Buffer: the
// client's data cannot be asked for again (a statement run again after a
// conflict).
var ErrCopyOnce = errors.New("COPY data cannot be sent again: run the COPY again")

// errNoCopy is a Buffer's answer to COPY when it was not made for a Copier.
var errNoCopy = errors.New("COPY to or from the client is not possible here")

// CopyIn passes on to the Copier the Buffer was made for, once.
func (b *Buffer) CopyIn(format int16, columns int) (io.Reader, error) {
	c, err := b.takeCopier()
	if err != nil {
		return nil, err
	}
	return c.CopyIn(format, columns)
}

// CopyOut passes on to the Copier the Buffer was made for, once.
func (b *Buffer) CopyOut(format int16, columns int) (io.WriteCloser, error) {
	c, err := b.takeCopier()
	if err != nil {
		return nil, err
	}
	return c.CopyOut(format, columns)
}

// takeCopier returns the Copier for the one COPY a Buffer carries.
func (b *Buffer) takeCopier() (Copier, error) {
	switch {
	case b.copier == nil:
		return nil, errNoCopy
	case b.copied:
		return nil, ErrCopyOnce
	}
	b.copied = true
	return b.copier, nil
}

// WireFormats implements WireWriter.
func (b *Buffer) WireFormats() ([]int16, bool) { return b.Formats, b.TakesWire }

// SimpleQuery: see Simple.
func (b *Buffer) SimpleQuery() bool { return b.Simple }

func (b *Buffer) Columns(cols []Column) error {
	b.Cols = append([]Column{}, cols...)
	return nil
}

// Row keeps a copy of values (byte slices included: the caller's are only
// valid during the call).
func (b *Buffer) Row(values []Value) error {
	row := make([]Value, len(values))
	for i, v := range values {
		switch bs := v.(type) {
		case []byte:
			v = append([]byte(nil), bs...)
		case Wire:
			v = append(Wire(nil), bs...)
		}
		row[i] = v
	}
	b.Rows = append(b.Rows, row)
	return nil
}

func (b *Buffer) Complete(tag string) error {
	b.Tag, b.Done = tag, true
	return nil
}

func (b *Buffer) Empty() error {
	b.IsEmpty = true
	return nil
}

// Replay sends everything kept to w, in the order it came.
func (b *Buffer) Replay(w Writer) error {
	if b.IsEmpty {
		return w.Empty()
	}
	if b.Cols != nil {
		if err := w.Columns(b.Cols); err != nil {
			return err
		}
		for _, r := range b.Rows {
			if err := w.Row(r); err != nil {
				return err
			}
		}
	}
	if !b.Done {
		return nil
	}
	return w.Complete(b.Tag)
}
