// Package regress runs PostgreSQL 15's own regression suite
// (src/test/regress) through certa and through a plain PostgreSQL, the way
// pg_regress runs it: each test file fed to psql -X -a -q with
// pg_regress's environment, one test after another in the order of
// parallel_schedule. It compares the two outputs test by test (identical,
// different only in messages, different) and, after each test, checks the
// certa cluster: every node caught up with node 1, no unforeseen
// conflicts, equal checksums. The report reads each difference's cause
// from its diff (causes.go: a superuser's privilege, roles, a refusal of
// certa's, numbers only...) and names the tests that differ only where
// a superuser, several databases or two-phase commit is needed. With
// Config.AsClient the tests also run through a plain PostgreSQL as a
// client that is not a superuser (the database's owner, as certa's
// clients are): a test certa's output of which differs from the
// superuser's but not from that client's differs only where PostgreSQL
// needs a superuser, which the patterns can only guess (a superuser's
// statement that failed early makes later ones fail too), and for the
// others the diff with that client's output shows the rest.
//
// Through the embedded engine, which takes no time zone but UTC and no
// date style but ISO, psql connects with PGTZ=UTC and PGDATESTYLE=ISO,
// MDY instead of pg_regress's America/Los_Angeles and Postgres, MDY, and
// its outputs are compared with a plain PostgreSQL's run with the same
// (the plain-utc directories).
//
// The command cmd/regress runs the whole schedule and writes a report;
// regress_test.go keeps the tests listed in identical-<engine>.txt
// identical. .ci/pgregress-source fetches the suite.
package regress
