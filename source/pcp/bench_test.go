package pcp

import "testing"

// BenchmarkReadArchive reads the committed v3 archive (60 records of 78
// metrics, three volumes) into host: windows: what a day of 1-s PCP
// history costs is 1 440 times one iteration.
func BenchmarkReadArchive(b *testing.B) {
	base := archiveBase(b, "host-v3")
	b.ReportAllocs()
	for b.Loop() {
		ivs, err := read(base, readOptions{})
		if err != nil || len(ivs) != 59 {
			b.Fatalf("%d windows, %v", len(ivs), err)
		}
	}
}
