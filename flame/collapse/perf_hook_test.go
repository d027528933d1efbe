package collapse

import (
	"strings"
	"testing"
)

// TestPerfFrameHookSeesModules: the hook gets every tidied frame with its
// module, so only frames of one binary are marked (the database decoder's
// use); with the hook's marker removed the output is the golden's.
func TestPerfFrameHookSeesModules(t *testing.T) {
	data := mustRead(t, perfTestFile(t, "perf-dd-stacks-01.txt"))
	plain, _ := collapsePerfBytes(t, data, Options{})
	hook := func(name, module string) string {
		if strings.HasSuffix(module, "/vmlinux") {
			return name + "_[vm]"
		}
		return name
	}
	marked, _ := collapsePerfBytes(t, data, Options{FrameHook: hook, Threads: 2})
	if !strings.Contains(marked, "sys_read_[vm]") || strings.Contains(marked, "read_[vm];") && !strings.Contains(marked, "vfs_read_[vm]") {
		t.Errorf("kernel frames not marked:\n%.400s", marked)
	}
	if strings.Contains(marked, "[dd]_[vm]") || strings.Contains(marked, ";read_[vm]") {
		t.Errorf("user-space frames marked:\n%.400s", marked)
	}
	if got := strings.ReplaceAll(marked, "_[vm]", ""); got != plain {
		t.Errorf("without the marker the output differs from the plain collapse")
	}
}
