package pgparse

import "testing"

func TestInsertWithColumns(t *testing.T) {
	cols := []string{"a", "b", "Odd Name"}
	for sql, want := range map[string]string{
		"INSERT INTO t VALUES (1, 2), (3, 4) ON CONFLICT (a) DO UPDATE SET b = 0": "INSERT INTO t (a, b) VALUES (1, 2), (3, 4) ON CONFLICT (a) DO UPDATE SET b = 0",
		"INSERT INTO t VALUES (1, 2, 3)":                                          `INSERT INTO t (a, b, "Odd Name") VALUES (1, 2, 3)`,
		"INSERT INTO t VALUES (1, 2, 3, 4)":                                       "",
		"INSERT INTO t (b) VALUES (1)":                                            "",
		"INSERT INTO t SELECT 1":                                                  "",
		"SELECT 1; SELECT 2":                                                      "",
	} {
		got, ok := InsertWithColumns(sql, cols)
		if got != want || ok != (want != "") {
			t.Errorf("%s:\n got %q %v\nwant %q", sql, got, ok, want)
		}
	}
}
