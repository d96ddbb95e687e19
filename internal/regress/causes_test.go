package regress

import (
	"slices"
	"strings"
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
@@ -40,3 +42,3 @@
- a
- b
+ b
+ a
@@ -50,2 +52,2 @@
- 34
+ 34.5
@@ -60,2 +62,2 @@
-ERROR:  invalid input syntax for type integer: "34.5"
+INSERT 0 1
@@ -70,2 +72,2 @@
- 1
+ERROR:  no such function: f
`)
	want := []Cause{CauseSuperuser, CauseNumbers, CauseRefusal, CauseMessages, CauseOrder, CauseSilent, CauseSilent, CauseOther}
	if got := HunkCauses(diff); !slices.Equal(got, want) {
		t.Fatalf("hunk causes %q, want %q", got, want)
	}
	if got := countCause(diff, CauseSilent); got != 2 {
		t.Fatalf("%d silent hunks, want 2", got)
	}
	want = []Cause{CauseSuperuser, CauseRefusal, CauseNumbers, CauseMessages, CauseOrder, CauseSilent, CauseOther}
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

// A test that differs from the superuser's output but not from the
// plain PostgreSQL's client's is excused whatever its hunks read as;
// one that differs from both is excused only by its causes.
func TestExcusedAsClient(t *testing.T) {
	er := EngineReport{Engine: "postgres", Results: []TestResult{
		{Test: "cascade", Class: Differs, Causes: []Cause{CauseSuperuser, CauseOther}, AsClient: Identical},
		{Test: "real", Class: Differs, Causes: []Cause{CauseSuperuser, CauseOther}, AsClient: Differs},
		{Test: "regex", Class: Messages, Causes: []Cause{CauseSuperuser}, AsClient: NotRun},
		{Test: "same", Class: Identical, AsClient: NotRun},
	}}
	var b strings.Builder
	er.writeCauses(&b)
	if !strings.Contains(b.String(), "two-phase commit is needed: cascade regex\n") {
		t.Fatalf("excused tests not cascade and regex:\n%s", b.String())
	}
	if got := er.asClient(Identical); !slices.Equal(got, []string{"cascade"}) {
		t.Fatalf("identical as a client: %q", got)
	}
}
