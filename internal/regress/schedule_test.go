package regress

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestSchedule(t *testing.T) {
	dir := t.TempDir()
	schedule := `# comment
test: test_setup
test: boolean char point lseg line box path polygon circle
ignore: random
test: geometry create_index random
test: create_misc
test: join fast_default
`
	if err := os.WriteFile(filepath.Join(dir, "parallel_schedule"), []byte(schedule), 0o644); err != nil {
		t.Fatal(err)
	}
	tests, err := ReadSchedule(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"test_setup", "boolean", "char", "point", "lseg", "line", "box", "path", "polygon", "circle",
		"geometry", "create_index", "random", "create_misc", "join", "fast_default"}
	if !slices.Equal(tests, want) {
		t.Fatalf("ReadSchedule: %q, want %q", tests, want)
	}
	got, err := Select(tests, []string{"join", "geometry", "char"})
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"test_setup", "char", "point", "lseg", "line", "box", "path", "polygon", "circle",
		"geometry", "create_index", "create_misc", "join"}
	if !slices.Equal(got, want) {
		t.Errorf("Select: %q, want %q", got, want)
	}
	if _, err := Select(tests, []string{"nosuch"}); err == nil {
		t.Error("Select of a test not in the schedule: no error")
	}
}
