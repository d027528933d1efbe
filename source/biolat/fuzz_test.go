package biolat

import (
	"strconv"
	"strings"
	"testing"
)

// FuzzParseDeviceNames: any text gives names only for lines whose major
// and minor fit the kernel's 12 and 20 bits, each under its number.
func FuzzParseDeviceNames(f *testing.F) {
	f.Add(" 254       0 vda 65064369 110000 1165440538\n   7       3 loop3 5 6 7 8\n")
	f.Add(" 259 1048576 nvme9n1 0\n 4096 0 big\nnot a line\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, text string) {
		for num, name := range parseDeviceNames(strings.NewReader(text)) {
			n, err := strconv.ParseUint(num, 10, 32)
			if err != nil || name == "" || strings.ContainsAny(name, " \t\n") {
				t.Fatalf("device %q named %q", num, name)
			}
			if !strings.Contains(text, strconv.FormatUint(n>>20, 10)) || !strings.Contains(text, name) {
				t.Fatalf("device %q (%s) is not in the input", num, name)
			}
		}
	})
}
