package remotewrite

import (
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// The messages of remote write 1.0 (prometheus/prompb types.proto and
// remote.proto), only the fields latscope sends. They are encoded by hand
// with protowire rather than generated: the module that ships prompb
// brings the whole of Prometheus along, and these few messages are stable
// (remote write 1.0 is frozen).
type writeRequest struct {
	Series []timeSeries // field 1
}

type timeSeries struct {
	Labels     []label     // field 1
	Samples    []sample    // field 2
	Histograms []histogram // field 4
}

type label struct {
	Name  string // field 1
	Value string // field 2
}

type sample struct {
	Value     float64 // field 1
	Timestamp int64   // field 2, milliseconds since the epoch
}

// histogram is a native histogram with integer counts and positive
// buckets only: latencies are never negative.
type histogram struct {
	Count          uint64  // field 1 (count_int)
	Sum            float64 // field 3
	Schema         int32   // field 4, sint32
	ZeroThreshold  float64 // field 5
	ZeroCount      uint64  // field 6 (zero_count_int)
	PositiveSpans  []span  // field 11
	PositiveDeltas []int64 // field 12, packed sint64
	Timestamp      int64   // field 15, milliseconds since the epoch
}

type span struct {
	Offset int32  // field 1, sint32
	Length uint32 // field 2
}

// marshal encodes the request as protobuf.
func (r writeRequest) marshal() []byte {
	var b []byte
	for _, ts := range r.Series {
		b = appendMessage(b, 1, ts.marshal())
	}
	return b
}

func (ts timeSeries) marshal() []byte {
	var b []byte
	for _, l := range ts.Labels {
		var lb []byte
		lb = appendString(lb, 1, l.Name)
		lb = appendString(lb, 2, l.Value)
		b = appendMessage(b, 1, lb)
	}
	for _, s := range ts.Samples {
		var sb []byte
		sb = appendDouble(sb, 1, s.Value)
		sb = appendVarint(sb, 2, uint64(s.Timestamp))
		b = appendMessage(b, 2, sb)
	}
	for _, h := range ts.Histograms {
		b = appendMessage(b, 4, h.marshal())
	}
	return b
}

func (h histogram) marshal() []byte {
	var b []byte
	// count_int and zero_count_int are members of oneofs: written even
	// when zero, so that the receiver sees integer counts.
	b = protowire.AppendTag(b, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, h.Count)
	b = appendDouble(b, 3, h.Sum)
	b = appendVarint(b, 4, protowire.EncodeZigZag(int64(h.Schema)))
	b = appendDouble(b, 5, h.ZeroThreshold)
	b = protowire.AppendTag(b, 6, protowire.VarintType)
	b = protowire.AppendVarint(b, h.ZeroCount)
	for _, s := range h.PositiveSpans {
		var sb []byte
		sb = appendVarint(sb, 1, protowire.EncodeZigZag(int64(s.Offset)))
		sb = appendVarint(sb, 2, uint64(s.Length))
		b = appendMessage(b, 11, sb)
	}
	if len(h.PositiveDeltas) > 0 {
		var packed []byte
		for _, d := range h.PositiveDeltas {
			packed = protowire.AppendVarint(packed, protowire.EncodeZigZag(d))
		}
		b = appendMessage(b, 12, packed)
	}
	return appendVarint(b, 15, uint64(h.Timestamp))
}

// appendVarint writes a varint field, omitted when zero as proto3 does.
func appendVarint(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func appendDouble(b []byte, num protowire.Number, v float64) []byte {
	if v == 0 && !math.Signbit(v) {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, math.Float64bits(v))
}

func appendString(b []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendMessage(b []byte, num protowire.Number, m []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, m)
}
