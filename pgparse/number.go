package pgparse

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// FindNumbers returns the numeric constants of sql as written ("1.50",
// "1e3", "12345678901234567890"): PostgreSQL reads each as an exact
// number (integer or numeric). ok is false when PostgreSQL's scanner
// cannot read sql.
func FindNumbers(sql string) (numbers []string, ok bool) {
	scan, err := pg_query.Scan(sql)
	if err != nil {
		return nil, false
	}
	for _, t := range scan.Tokens {
		if t.Token == pg_query.Token_FCONST || t.Token == pg_query.Token_ICONST {
			numbers = append(numbers, sql[t.Start:t.End])
		}
	}
	return numbers, true
}
