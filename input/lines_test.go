package input

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

func TestLinesEndingsAndLongLines(t *testing.T) {
	in := "a\r\nbb\n" + strings.Repeat("x", 40) + "\nlast"
	lr := NewLineReader(strings.NewReader(in), 10)
	want := []struct {
		text    string
		tooLong bool
	}{{"a", false}, {"bb", false}, {strings.Repeat("x", 10), true}, {"last", false}}
	for i, w := range want {
		text, tooLong, err := lr.Next()
		if err != nil || text != w.text || tooLong != w.tooLong || lr.Number() != i+1 {
			t.Errorf("line %d: %q %v %v (number %d)", i+1, text, tooLong, err, lr.Number())
		}
	}
	if _, _, err := lr.Next(); err != io.EOF {
		t.Errorf("after the last line: %v", err)
	}
}

func TestEachLineDeliversALineAsSoonAsItArrives(t *testing.T) {
	pr, pw := io.Pipe()
	got := make(chan string, 4)
	done := make(chan error, 1)
	go func() {
		done <- EachLine(context.Background(), "pipe", pr, 100, func(n int, text string, _ bool) error {
			got <- text
			return nil
		})
	}()
	pw.Write([]byte("first\nsec"))
	select {
	case l := <-got:
		if l != "first" {
			t.Errorf("got %q", l)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a complete line waited for more input")
	}
	pw.Write([]byte("ond\n"))
	pw.Close()
	if l := <-got; l != "second" {
		t.Errorf("got %q", l)
	}
	if err := <-done; err != nil {
		t.Error(err)
	}
}

func TestEachLineStopsOnErrors(t *testing.T) {
	boom := errors.New("boom")
	err := EachLine(context.Background(), "f", strings.NewReader("a\nb\n"), 10, func(n int, _ string, _ bool) error {
		if n == 2 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) {
		t.Errorf("error %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := EachLine(ctx, "f", strings.NewReader("a\n"), 10, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}
