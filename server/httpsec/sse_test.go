package httpsec_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/latscope/latscope/server/httpsec"
)

func TestSSEWriterFormatsEvents(t *testing.T) {
	rec := httptest.NewRecorder()
	sse, err := httpsec.NewSSEWriter(rec, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	sse.Retry(2 * time.Second)
	sse.Event(httpsec.SSEEvent{ID: "7", Type: "log", Data: []byte("one\ntwo\r")})
	sse.Event(httpsec.SSEEvent{Data: []byte("plain")})
	sse.Comment("heartbeat")
	if err := sse.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "retry: 2000\n\nid: 7\nevent: log\ndata: one\ndata: two\n\ndata: plain\n\n: heartbeat\n\n"
	if got := rec.Body.String(); got != want {
		t.Errorf("stream:\n%q\nwant\n%q", got, want)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q", ct)
	}
}
