package regress

import (
	"slices"
	"testing"
)

// A diff's hunks are read for their causes: each hunk by the first
// pattern its lines match, else by its shape.
func TestDiffCauses(t *testing.T) {
	diff := []byte(`--- plain/results/x.out
+++ postgres/results/x.out
@@ -1,3 +1,4 @@
 CREATE FUNCTION f() RETURNS int AS 'x' LANGUAGE C;
-ERROR:  could not access file "x": No such file or directory
+ERROR:  permission denied for language c
@@ -10,4 +11,4 @@
 SELECT * FROM t;
- id | v
-----+---
-  1 | a
+  id | v
+-----+---
+ 129 | a
@@ -20,2 +21,3 @@
 CREATE UNLOGGED TABLE u (a int);
+ERROR:  certa: nope
@@ -30,2 +32,2 @@
-ERROR:  a
+ERROR:  b
`)
	want := []Cause{CauseSuperuser, CauseRefusal, CauseNumbers, CauseOther}
	if got := DiffCauses(diff); !slices.Equal(got, want) {
		t.Fatalf("causes %q, want %q", got, want)
	}
	if got := DiffCauses([]byte("@@ -1 +1 @@\n-CREATE ROLE r;\n+ERROR:  permission denied to create role\n")); !slices.Equal(got, []Cause{CauseRoles}) {
		t.Fatalf("causes %q, want roles", got)
	}
	if !CauseSuperuser.Excused() || CauseRoles.Excused() || CauseNumbers.Excused() {
		t.Fatal("excused causes: superuser, several databases and two-phase commit alone")
	}
}
