package pace

import (
	"fmt"
	"runtime"
	"strings"
)

// Placement says where a load generator ran: the CPUs it was allowed and
// the Go processors it used.
type Placement struct {
	CPUs       []int  `json:"cpus"`
	CPUList    string `json:"cpu_list"`
	GOMAXPROCS int    `json:"gomaxprocs"`
}

// CurrentPlacement describes the running process.
func CurrentPlacement() Placement {
	cpus := AllowedCPUs()
	return Placement{CPUs: cpus, CPUList: FormatCPUList(cpus), GOMAXPROCS: runtime.GOMAXPROCS(0)}
}

// String is "CPUs 0-1 (2 allowed), GOMAXPROCS 5".
func (p Placement) String() string {
	list := p.CPUList
	if list == "" {
		list = "unknown"
	}
	return fmt.Sprintf("CPUs %s (%d allowed), GOMAXPROCS %d", list, len(p.CPUs), p.GOMAXPROCS)
}

// FormatCPUList writes CPU numbers as taskset does: "0-3,8,10-11".
func FormatCPUList(cpus []int) string {
	var b strings.Builder
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		if j > i {
			fmt.Fprintf(&b, "%d-%d", cpus[i], cpus[j])
		} else {
			fmt.Fprintf(&b, "%d", cpus[i])
		}
		i = j + 1
	}
	return b.String()
}
