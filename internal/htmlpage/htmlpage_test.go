package htmlpage

import (
	"bufio"
	"strings"
	"testing"
)

func TestPage(t *testing.T) {
	var b strings.Builder
	w := bufio.NewWriter(&b)
	WriteHead(w, "a &amp; b", "p{}\n")
	w.WriteString("<main></main>\n")
	WriteTail(w, "d", []byte(`{"x":"\u003c"}`), "go()\n")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n" +
		`<meta http-equiv="Content-Security-Policy" content="` + ContentSecurityPolicy + "\">\n" +
		`<meta name="viewport" content="width=device-width, initial-scale=1">` + "\n" +
		`<meta name="generator" content="latscope">` + "\n" +
		"<title>a &amp; b</title>\n<style>\np{}\n</style>\n</head>\n<body>\n<main></main>\n" +
		`<script type="application/json" id="d">{"x":"\u003c"}</script>` + "\n<script>\ngo()\n</script>\n</body>\n</html>\n"
	if b.String() != want {
		t.Errorf("page\n%s\nwant\n%s", b.String(), want)
	}
}
