package main

import (
	"github.com/latscope/latscope/driver"
	"github.com/spf13/cobra"
)

func newServeCommand(env environment) *cobra.Command {
	var sc driver.ServeConfig
	var schedule string
	cmd := &cobra.Command{
		Use:   "serve [SOURCE...] --data DIR | --config latscope.yaml",
		Short: "Record sources continuously into the archive and serve them over an authenticated REST API",
		Long: `Run collection jobs continuously: every SOURCE (a database URI, a file followed as it
grows, an iotest:/nettest: probe) is read without end and each interval is written to the
embedded archive in the data directory as it comes. A failing job restarts with backoff
(1 s doubling to 1 min) and the time it could not observe is archived as a gap. The REST API
(docs/serve.md) serves the jobs' state, the archive's series and their histograms, and
changes jobs while the server runs (admins create, change and delete them, kept in the data
directory; operators pause and resume them); every route but login and /healthz needs a
session or an API token.

The quick form records the SOURCE arguments (files followed, probes for --schedule, every
--interval); --config reads jobs and settings from a YAML file (docs/serve.md has a full
example). On first start the user admin is created and its password printed once on
stderr. Listens on 127.0.0.1:7879; any other address needs --tls-cert and --tls-key, or
--insecure-listen. SIGINT or SIGTERM stops the jobs after their in-flight interval and
closes the archive cleanly.`,
		Example: `  latscope serve iotest:/var/tmp --schedule '30s every 15m' --data /var/lib/latscope
  latscope serve postgres://latscope@db01/app --data /var/lib/latscope   # password from PGPASSWORD or --config
  latscope serve --config /etc/latscope/latscope.yaml
  latscope serve /var/log/app/latency.log --data ./data --listen 0.0.0.0:7879 --tls-cert cert.pem --tls-key key.pem
  latscope serve --prometheus http://prometheus:9090 --data ./fleet-ui       # one browser view of every host in the store
  latscope serve users add alice --role viewer --data /var/lib/latscope
  latscope serve users reset admin --data /var/lib/latscope`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if sc.ConfigFile == "" && len(args) == 0 && sc.Prometheus == "" {
				return usagef("serve needs SOURCE arguments and --data DIR, or --config FILE, or --prometheus URL; see --help")
			}
			if sc.ConfigFile == "" && sc.Data == "" {
				return usagef("serve needs --data DIR (the archive and the users are kept there)")
			}
			sc.Sources, sc.Schedule, sc.Stderr = args, schedule, env.stderr
			return driver.Serve(cmd.Context(), sc)
		},
	}
	f := cmd.Flags()
	f.StringVar(&sc.ConfigFile, "config", "", "YAML configuration file (jobs, listen address, TLS, data directory)")
	f.StringVar(&sc.Data, "data", "", "data directory: archive (latscope.db) and users (auth.db); created if missing")
	f.StringVar(&sc.Listen, "listen", "", "address to listen on (default 127.0.0.1:7879)")
	f.StringVar(&sc.TLSCert, "tls-cert", "", "TLS certificate (PEM); with --tls-key serves HTTPS")
	f.StringVar(&sc.TLSKey, "tls-key", "", "TLS private key (PEM)")
	f.BoolVar(&sc.InsecureListen, "insecure-listen", false, "serve plain HTTP on a non-loopback address (warned at every start)")
	f.DurationVar(&sc.Interval, "interval", 0, "interval of the SOURCE arguments' windows (default 1s)")
	f.StringVar(&sc.Prometheus, "prometheus", "", "fleet store: a Prometheus-compatible query API (http://HOST:9090) whose latscope series the browser view shows beside the archive's (docs/fleet.md)")
	f.StringVar(&schedule, "schedule", "", "run probe SOURCEs for a while every period, e.g. '30s every 15m' (default: continuously)")
	cmd.AddCommand(newUsersCommand(env))
	return cmd
}

func newUsersCommand(env environment) *cobra.Command {
	var data, role string
	users := &cobra.Command{
		Use:   "users",
		Short: "Add users and reset passwords in a data directory",
	}
	add := &cobra.Command{
		Use:     "add NAME --role viewer|operator|admin --data DIR",
		Short:   "Add a user with a generated password, printed once",
		Example: `  latscope serve users add alice --role viewer --data /var/lib/latscope`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if data == "" {
				return usagef("users add needs --data DIR")
			}
			return driver.UsersAdd(cmd.Context(), data, args[0], role, env.stdout)
		},
	}
	add.Flags().StringVar(&role, "role", "viewer", "viewer (read), operator (and run), admin (and administer)")
	reset := &cobra.Command{
		Use:     "reset NAME --data DIR",
		Short:   "Give a user a new generated password, printed once, and end its sessions",
		Example: `  latscope serve users reset admin --data /var/lib/latscope`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if data == "" {
				return usagef("users reset needs --data DIR")
			}
			return driver.UsersReset(cmd.Context(), data, args[0], env.stdout)
		},
	}
	users.PersistentFlags().StringVar(&data, "data", "", "data directory of the server")
	users.AddCommand(add, reset)
	return users
}
