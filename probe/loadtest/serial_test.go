package loadtest

import "testing"

func TestSerialCall(t *testing.T) {
	c := SerialCall{RoundTrips: 2, RTTUS: 250, ServiceUS: 500}
	if c.NetworkUS() != 500 || c.TimeUS() != 1000 || c.PerSecond() != 1000 || c.NetworkShare() != 0.5 {
		t.Errorf("%+v: network %g, time %g, per second %g, share %g", c, c.NetworkUS(), c.TimeUS(), c.PerSecond(), c.NetworkShare())
	}
	if z := (SerialCall{}); z.PerSecond() != 0 || z.NetworkShare() != 0 {
		t.Errorf("a call of no time: %g per second, share %g", z.PerSecond(), z.NetworkShare())
	}
}
