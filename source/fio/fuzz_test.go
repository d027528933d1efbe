package fio

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/internal/testkit/sourcetest"
	"github.com/latscope/latscope/source"
	"github.com/latscope/latscope/stream"
)

// fuzzRun feeds data through a format: no panic, every interval valid.
func fuzzRun(t *testing.T, f source.Format, data []byte, mod time.Time, opts source.Options) {
	f.Detect(data)
	src, err := f.Open(source.Input{Name: "fuzz", Reader: bytes.NewReader(data), Diag: input.NewDiagnostics(nil, 5), ModTime: mod}, opts)
	if err != nil {
		t.Fatal(err)
	}
	_ = src.Run(context.Background(), func(iv stream.Interval) error {
		sourcetest.CheckInterval(t, iv)
		return nil
	})
}

// seeds adds the shipped real outputs and their halves.
func seeds(f *testing.F, names ...string) {
	for _, n := range names {
		data, err := os.ReadFile(testdata(n))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		f.Add(data[:len(data)/2])
	}
}

func FuzzJSON(f *testing.F) {
	seeds(f, "randread.json", "client.json", "randrw-coarse6.json")
	f.Add([]byte("fio-3.33\n{\n\"fio version\":\"x\",\"timestamp\":5,\"jobs\":[{\"jobname\":\"a\",\"read\":{\"clat_ns\":{\"N\":1,\"mean\":2,\"bins\":{\"2\":1}}}}]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzRun(t, JSONFormat(), data, time.Time{}, source.Options{})
	})
}

func FuzzHistLog(f *testing.F) {
	seeds(f, "randrw-coarse6_clat_hist.1.log", "randread_clat_hist.1.log")
	f.Fuzz(func(t *testing.T, data []byte) {
		opts := source.Options{}
		mod := time.Time{}
		if len(data)%2 == 1 {
			opts.Counts = source.CountsCumulative
			mod = time.Unix(1795313740, 0)
		}
		fuzzRun(t, HistLogFormat(), data, mod, opts)
	})
}
