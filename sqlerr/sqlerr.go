// Package sqlerr defines the errors certa reports to clients. Every error a
// client can see carries a PostgreSQL SQLSTATE code, so drivers and ORMs can
// classify it (40001 is retried by most of them).
package sqlerr

import (
	"context"
	"errors"
	"fmt"
)

// SQLSTATE codes certa uses. The names follow PostgreSQL's errcodes.
const (
	SerializationFailure         = "40001" // lost certification; the client should retry
	StatementCompletionUnknown   = "40003" // commit outcome unknown (contact lost after submit)
	NoQuorum                     = "57P03" // node is not connected to a majority (cannot_connect_now)
	InFailedTransaction          = "25P02"
	ActiveTransaction            = "25001"
	ReadOnlyTransaction          = "25006"
	NoActiveTransaction          = "25P01"
	InvalidSavepoint             = "3B001" // invalid_savepoint_specification: no savepoint of that name
	InvalidSchemaName            = "3F000" // a schema that does not exist
	FeatureNotSupported          = "0A000"
	InsufficientPrivilege        = "42501"
	SyntaxError                  = "42601"
	UndefinedTable               = "42P01"
	UndefinedColumn              = "42703"
	InvalidColumnReference       = "42P10"
	DuplicateColumn              = "42701"
	AmbiguousColumn              = "42702"
	UndefinedObject              = "42704"
	UndefinedParameter           = "42P02"
	UndefinedFunction            = "42883"
	CannotCoerce                 = "42846"
	GeneratedAlways              = "428C9" // a value for a GENERATED ALWAYS column
	InvalidTextRepresentation    = "22P02"
	InvalidBinaryRepresentation  = "22P03"
	NumericValueOutOfRange       = "22003"
	StringDataRightTruncation    = "22001"
	InvalidDatetimeFormat        = "22007"
	BadCopyFileFormat            = "22P04"
	CharacterNotInRepertoire     = "22021" // bytes that are not UTF-8
	UntranslatableCharacter      = "22P05"
	DatetimeFieldOverflow        = "22008"
	DuplicateTable               = "42P07"
	DuplicateObject              = "42710"
	InvalidParameterValue        = "22023"
	NullValueNotAllowed          = "22004"
	DatatypeMismatch             = "42804"
	UniqueViolation              = "23505"
	NotNullViolation             = "23502"
	SequenceLimitExceeded        = "2200H"
	CheckViolation               = "23514"
	ForeignKeyViolation          = "23503"
	DependentObjectsStillExist   = "2BP01" // DROP of a table another table's foreign key references
	ProtocolViolation            = "08P01"
	InvalidTableDefinition       = "42P16"
	WrongObjectType              = "42809" // e.g. OR REPLACE VIEW of a table
	ObjectNotInPrerequisiteState = "55000" // the object is not in the state the statement needs
	LockNotAvailable             = "55P03"
	CantChangeRuntimeParam       = "55P02" // a parameter fixed at server start or by its context
	DivisionByZero               = "22012"
	CardinalityViolation         = "21000"
	GroupingError                = "42803"
	InvalidArgumentForLog        = "2201E"
	InvalidArgumentForPower      = "2201F"
	QueryCanceled                = "57014"
	AdminShutdown                = "57P01"
	ProgramLimitExceeded         = "54000"
	DiskFull                     = "53100"
	Internal                     = "XX000"
	DataCorrupted                = "XX001" // a write set that does not decode
)

// Error is a client-facing error: a SQLSTATE code and a message a person
// understands, with optional detail and hint (PostgreSQL's ErrorResponse fields).
type Error struct {
	Code    string
	Message string
	Detail  string
	Hint    string
	// Where is the context the error arose in (PostgreSQL's CONTEXT:
	// "COPY t, line 3").
	Where string
	// Position is where in the client's query text the error is: a
	// character index from 1, 0 for none. InternalPosition is one in
	// InternalQuery, a query PostgreSQL made (a function's body).
	Position         int32
	InternalPosition int32
	InternalQuery    string
	// The object the error is about, where PostgreSQL names it.
	SchemaName, TableName, ColumnName, DataTypeName, ConstraintName string
	// Where in PostgreSQL's source the error was raised.
	File    string
	Line    int32
	Routine string
	// Severity is a notice's (NOTICE, WARNING, INFO...); errors are sent
	// as ERROR whatever it says.
	Severity string
	// Err is the underlying cause, if any; it is not shown to clients.
	Err error
}

func (e *Error) Error() string {
	if e.Detail != "" {
		return fmt.Sprintf("%s (SQLSTATE %s): %s", e.Message, e.Code, e.Detail)
	}
	return fmt.Sprintf("%s (SQLSTATE %s)", e.Message, e.Code)
}

func (e *Error) Unwrap() error { return e.Err }

// Notices are messages a statement sends besides its result (NOTICE,
// WARNING, INFO): an Error with a Severity. A session's front end puts a
// function that sends them to the client in the context of each
// statement it runs (WithNotices); an engine passes on what its server
// says while it runs a client's statement (NoticesFrom).

type noticesKey struct{}

// WithNotices returns ctx carrying send, which sends a notice to the
// client of the statement ctx runs. send is called on the goroutine that
// runs the statement.
func WithNotices(ctx context.Context, send func(*Error)) context.Context {
	return context.WithValue(ctx, noticesKey{}, send)
}

// NoticesFrom returns the function ctx carries (WithNotices), or nil.
func NoticesFrom(ctx context.Context) func(*Error) {
	f, _ := ctx.Value(noticesKey{}).(func(*Error))
	return f
}

// New returns an Error with a formatted message.
func New(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns an Error with code and message whose cause is err.
func Wrap(err error, code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Err: err}
}

// As finds the first *Error in err's chain. Errors that carry no SQLSTATE are
// reported as XX000 internal errors with their text.
func As(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: Internal, Message: err.Error(), Err: err}
}

// Code returns the SQLSTATE of err ("" for nil).
func Code(err error) string {
	if err == nil {
		return ""
	}
	return As(err).Code
}
