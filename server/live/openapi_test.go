package live_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/latscope/latscope/server/live"
	"github.com/latscope/latscope/stream"
)

// TestEventsMatchOpenAPI validates the data of interval and job events
// with their schemas in docs/openapi.yaml (LiveInterval, Job): the
// contract test of server/api cannot read a stream.
func TestEventsMatchOpenAPI(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromFile("../../docs/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, live.Options{})
	s.write(interval(0))
	c := s.connect("", "")
	s.write(interval(1))
	s.write(stream.Interval{Start: interval(2).Start, Duration: interval(2).Duration, Gap: true})
	s.feed <- stream.Interval{Source: failSource}
	schemas := map[string]string{live.TypeInterval: "LiveInterval", live.TypeJob: "Job"}
	seen := map[string]int{}
	for seen[live.TypeInterval] < 4 || seen[live.TypeJob] == 0 {
		ev := c.next(t)
		name, ok := schemas[ev.Type]
		if !ok {
			continue
		}
		seen[ev.Type]++
		var v any
		if err := json.Unmarshal([]byte(ev.Data), &v); err != nil {
			t.Fatal(err)
		}
		if err := doc.Components.Schemas[name].Value.VisitJSON(v); err != nil {
			t.Errorf("%s event %s does not match %s: %v", ev.Type, ev.Data, name, err)
		}
	}
}
