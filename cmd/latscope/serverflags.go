package main

import (
	"github.com/spf13/cobra"

	"github.com/latscope/latscope/source"
)

// serverFlags are the flags of a latscope serve SOURCE (https://HOST:7879),
// shared by every data command.
type serverFlags struct {
	tokenFile, caFile string
	insecure          bool
}

func (f *serverFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.tokenFile, "token-file", "", "server SOURCEs (https://HOST:7879): the API token, on the file's first line (else $LATSCOPE_TOKEN)")
	fl.StringVar(&f.caFile, "ca-file", "", "server SOURCEs: PEM certificates to trust besides the system's (a private CA, a self-signed server)")
	fl.BoolVar(&f.insecure, "insecure-skip-verify", false, "server SOURCEs: do not check the server's certificate (warned; the token can be read by anyone on the path)")
}

func (f *serverFlags) options() source.ServerOptions {
	return source.ServerOptions{TokenFile: f.tokenFile, CAFile: f.caFile, InsecureSkipVerify: f.insecure}
}
