package loadtest

// SerialCall is one operation issued after the previous one completed (a
// session's database calls, a log writer's synchronous writes): each pays
// its round trips on the wire plus the time spent at the far end. The
// network what-if of nettest and the replication what-if of `latscope
// whatif` both rest on it.
type SerialCall struct {
	RoundTrips int
	RTTUS      float64
	// ServiceUS is the per-operation time outside the round trips.
	ServiceUS float64
}

// NetworkUS is the time on the wire: round trips × RTT.
func (c SerialCall) NetworkUS() float64 { return float64(c.RoundTrips) * c.RTTUS }

// TimeUS is one operation's time from issue to completion.
func (c SerialCall) TimeUS() float64 { return c.NetworkUS() + c.ServiceUS }

// PerSecond is what one stream of such operations reaches (0 when an
// operation takes no time: no finite figure).
func (c SerialCall) PerSecond() float64 {
	if t := c.TimeUS(); t > 0 {
		return 1e6 / t
	}
	return 0
}

// NetworkShare is the fraction of each operation spent on the wire.
func (c SerialCall) NetworkShare() float64 {
	if t := c.TimeUS(); t > 0 {
		return c.NetworkUS() / t
	}
	return 0
}
