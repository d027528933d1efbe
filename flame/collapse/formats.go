package collapse

// Formats lists every stack format in detection order: perf script first
// (the most common and the most specific header), then the others.
func Formats() []Format { return append([]Format{PerfFormat()}, OtherFormats()...) }
