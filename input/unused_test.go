package input

import (
	"errors"
	"testing"
)

func TestUnused(t *testing.T) {
	var u Unused
	if err := u.Err("f.txt", "bcc"); err != nil {
		t.Errorf("nothing recorded: %v", err)
	}
	u.Line("f.txt", 1, "Tracing... Hit Ctrl-C to end.")
	u.Skipped("f.txt", 3, "a histogram of \"Kbytes\" is not a latency")
	for n := 4; n < 10; n++ {
		u.Line("f.txt", n, "prose")
	}
	err := u.Err("f.txt", "bcc")
	want := `f.txt: nothing read as bcc: 8 line(s) could not be used: f.txt:1: "Tracing... Hit Ctrl-C to end." is not part of the format; ` +
		`f.txt:3: a histogram of "Kbytes" is not a latency; f.txt:4: "prose" is not part of the format; and 5 more`
	if !errors.Is(err, ErrNothingRead) || err.Error() != want || u.Count() != 8 {
		t.Errorf("got %v (count %d), want %s", err, u.Count(), want)
	}
}
