module github.com/latscope/latscope

go 1.26.8
