package oracleaud

import (
	"context"
	"io"
	"runtime"
	"strings"
	"testing"
)

// repeatReader yields head, then record count times, without holding
// more than one copy of each.
type repeatReader struct {
	head, record string
	count        int
	pending      string
}

func (r *repeatReader) Read(p []byte) (int, error) {
	for r.pending == "" {
		switch {
		case r.head != "":
			r.pending, r.head = r.head, ""
		case r.count > 0:
			r.pending = r.record
			r.count--
		default:
			return 0, io.EOF
		}
	}
	n := copy(p, r.pending)
	r.pending = r.pending[n:]
	return n, nil
}

// TestMemoryBounded: 24 MB of records read through each reader without
// the heap growing with the input.
func TestMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 72 MB")
	}
	const bound = 8 << 20
	for _, c := range []struct {
		read         Reader
		head, record string
	}{
		{ReadText, synthHeader, synthRecord(stampStop, "select owner\n  from dba_objects", "3", "pts/1")},
		{ReadXML, xmlHead, xmlRecord("3", "select * from dual")},
		{ReadUnifiedCSV, "EVENT_TIMESTAMP_UTC,ACTION_NAME,SQL_TEXT\n", "2026-11-26 13:10:09.412,SELECT,\"select *\nfrom dual\"\n"},
	} {
		count := (24 << 20) / len(c.record)
		in := &repeatReader{head: c.head, record: c.record, count: count}
		n, peak := 0, uint64(0)
		var ms runtime.MemStats
		err := c.read(context.Background(), "big", in, nil, func(Record) error {
			if n++; n%20000 == 0 {
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapAlloc)
			}
			return nil
		})
		if err != nil || n != count {
			t.Fatalf("%d of %d records: %v", n, count, err)
		}
		if peak > bound {
			t.Errorf("%s: heap reached %d MB reading 24 MB", strings.SplitN(c.record, "\n", 2)[0][:20], peak>>20)
		}
		t.Logf("%d records, heap at most %.1f MB", n, float64(peak)/(1<<20))
	}
}
