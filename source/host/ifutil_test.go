package host

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// %ifutil as sar -n DEV computes it: the busier direction over a full
// duplex link, both over a half duplex one, nothing without a speed.
func TestIfutilAsSar(t *testing.T) {
	iface := func(name string, rx, tx uint64, link linkSpeed) ifCounters {
		c := ifCounters{name: name, link: link}
		c.c[ndRxBytes], c.c[ndTxBytes] = rx, tx
		return c
	}
	full, half := linkSpeed{mbps: 1000, fullDuplex: true}, linkSpeed{mbps: 100}
	prev := snapshot{haveNets: true, nets: []ifCounters{iface("eth0", 0, 0, full), iface("eth1", 0, 0, half), iface("lo", 0, 0, linkSpeed{})}}
	// In 2 s: eth0 receives 50 MB and sends 10 MB; eth1 3 MB each way.
	cur := snapshot{haveNets: true, nets: []ifCounters{iface("eth0", 50e6, 10e6, full), iface("eth1", 3e6, 3e6, half), iface("lo", 9e6, 9e6, linkSpeed{})}}
	want := map[string]float64{"eth0": 50e6 * 8 / 2 / 1e9 * 100, "eth1": 6e6 * 8 / 2 / 1e8 * 100}
	got := map[string]float64{}
	for _, m := range means(&prev, &cur, 2*time.Second, groups{net: true}, nil, nil) {
		if m.Key.Event == "net.%ifutil" {
			got[m.Key.Instance] = m.Sum / m.Count
		}
	}
	if len(got) != len(want) {
		t.Errorf("%%ifutil for %v, want eth0 and eth1 only", got)
	}
	for name, w := range want {
		if g := got[name]; g < w*(1-1e-12) || g > w*(1+1e-12) {
			t.Errorf("%s %%ifutil %v, want %v", name, g, w)
		}
	}
}

func TestReadLink(t *testing.T) {
	dir := t.TempDir()
	write := func(name, speed, duplex string) string {
		d := filepath.Join(dir, name)
		os.MkdirAll(d, 0o755)
		if speed != "" {
			os.WriteFile(filepath.Join(d, "speed"), []byte(speed+"\n"), 0o644)
		}
		os.WriteFile(filepath.Join(d, "duplex"), []byte(duplex+"\n"), 0o644)
		return d
	}
	for _, c := range []struct {
		speed, duplex string
		want          linkSpeed
	}{
		{"10000", "full", linkSpeed{mbps: 10000, fullDuplex: true}},
		{"100", "half", linkSpeed{mbps: 100}},
		{"-1", "unknown", linkSpeed{}}, // virtio
		{"", "", linkSpeed{}},          // lo: speed unreadable
		{"fast", "full", linkSpeed{}},
	} {
		if got := readLink(write("if"+c.speed+c.duplex, c.speed, c.duplex)); got != c.want {
			t.Errorf("speed %q duplex %q: %+v, want %+v", c.speed, c.duplex, got, c.want)
		}
	}
}
