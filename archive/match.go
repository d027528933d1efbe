package archive

// SeriesMatcher returns the filter of a --series glob (see Query.Series):
// it matches a series' event or its source's name; empty matches all.
// Live streams select series with it as reads do.
func SeriesMatcher(pattern string) (func(SeriesInfo) bool, error) {
	return Query{Series: pattern}.matcher()
}
