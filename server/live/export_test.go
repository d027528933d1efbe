package live

import "github.com/latscope/latscope/archive"

// Wants exposes a filter's choice to the fuzz test.
func Wants(f Filter, s archive.SeriesInfo) bool { return f.wantsSeries(s) || f.wantsJob(s.Source) }
