package hdrlog

import (
	"bytes"
	"context"
	"testing"

	"github.com/latscope/latscope/hist"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// FuzzRead feeds any bytes through Detect and Run: no panic, every interval
// valid with no negative counts.
func FuzzRead(f *testing.F) {
	for _, name := range []string{"jHiccup-2.0.7S.logV2.hlog", "tagged-Log.logV2.hlog", "latscope-js122a1.hlog"} {
		data := readTestdata(f, name)
		f.Add(data)
		f.Add(data[:len(data)/3])
	}
	// Synthetic: latscope comments with a custom grid, a fix list and a gap.
	f.Add([]byte("#[latscope hdrlog 1 values=ns]\n#[latscope grid id=g1 unit=us bounds=1,2.5,+Inf]\n" +
		"#[latscope interval start=1970-01-01T00:00:01Z duration=1000 relative]\n" +
		"#[latscope hist tag=a grid=g1 sum=3 exact=1 open=1 fix=z:0.5,1:2]\n" +
		"Tag=a,1.0,1.0,0.0,HISTFAAAACR42pJpmSzMwMDAzAABMJoRQrHfsv8AYW2WZwIEAAD//07fBDI=\n" +
		"#[latscope interval start=1970-01-01T00:00:02Z duration=1000 relative gap]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		Detect(data)
		opts := source.Options{}
		if len(data)%2 == 1 {
			opts.Counts = source.CountsCumulative
			opts.Unit = hist.Microsecond
		}
		src, err := Open(source.Input{Name: "fuzz", Reader: bytes.NewReader(data), Diag: input.NewDiagnostics(nil, 5)}, opts)
		if err != nil {
			t.Fatal(err)
		}
		_ = src.Run(context.Background(), func(iv stream.Interval) error {
			if err := iv.Validate(); err != nil {
				t.Fatalf("invalid interval: %v", err)
			}
			return nil
		})
	})
}
