package input

import (
	"fmt"
	"testing"
)

func TestOnceWarningsTellEachKindOnce(t *testing.T) {
	d := NewDiagnostics(nil, 5)
	w := NewOnceWarnings(d, "in.txt")
	w.Warn("unit", "line %d: no unit", 3)
	w.Warn("unit", "line %d: no unit", 9)
	w.Warn("back", "time goes back")
	NewOnceWarnings(d, "other.txt").Warn("unit", "line %d: no unit", 3)
	want := []string{"in.txt: line 3: no unit", "in.txt: time goes back", "other.txt: line 3: no unit"}
	if got := d.Warnings(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("warnings %q, want %q", got, want)
	}
	NewOnceWarnings(nil, "x").Warn("k", "nowhere") // no Diagnostics: silent
}
