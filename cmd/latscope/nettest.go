package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/latscope/latscope/driver"
	"github.com/latscope/latscope/internal/bytesize"
	"github.com/latscope/latscope/probe/nettest"
)

func newNetTestCommand(env environment) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "nettest server|client",
		Short: "Measure network round trips as a database call pays them (oratcptest with percentiles)",
		Long: `Measure what a database call really pays on the wire: a request and a reply of a chosen
size over an established TCP connection, timed in user space, every round trip in a
latency histogram. ping (ICMP, answered in the kernel) and hping (the TCP handshake)
measure something else; --mode connect shows the handshake for comparison.

Run "latscope nettest server" on the database host and "latscope nettest client HOST:PORT"
where the application runs.`,
		Example: `  latscope nettest server --listen 10.0.0.5:7878            # on the database host
  latscope nettest client 10.0.0.5:7878 --size 250 --duration 30s
  latscope nettest client 10.0.0.5:7878 --size 250 --tps 2356   # what if the RTT changes?
  latscope nettest client 10.0.0.5:7878 --mode connect          # TCP handshake only
  latscope nettest client 10.0.0.5:7878 --mode stream --size 64k  # pipelined throughput`,
	}
	cmd.AddCommand(newNetServerCommand(env), newNetClientCommand(env))
	return cmd
}

func newNetServerCommand(env environment) *cobra.Command {
	var (
		listen     string
		maxMessage string
		maxConns   int
		duration   time.Duration
	)
	cmd := &cobra.Command{
		Use:   "server [--listen ADDR:PORT]",
		Short: "Answer nettest clients (loopback unless --listen names another address)",
		Long: `Answer nettest clients: every request gets a reply of the size the client asked for.
The server listens on 127.0.0.1:7878 unless --listen says otherwise (":7878" for every
address). It serves many clients at once, refuses messages above --max-message, drops
peers that do not speak the protocol, stall or vanish, and logs one line per client.`,
		Example: `  latscope nettest server
  latscope nettest server --listen :7878
  latscope nettest server --listen 10.0.0.5:7878 --max-message 4m`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			limit, err := bytesize.Parse(maxMessage)
			if err != nil || limit < nettest.HeaderSize || limit > 1<<30 {
				return usagef("--max-message %q: want %d bytes to 1 GiB", maxMessage, nettest.HeaderSize)
			}
			if maxConns < 1 {
				return usagef("--max-connections must be at least 1")
			}
			c := driver.NetServerConfig{
				Config: driver.Config{Stdout: env.stdout, Stderr: env.stderr, Duration: duration},
				Server: nettest.ServerConfig{Listen: listen, MaxMessage: uint32(limit), MaxConns: maxConns},
			}
			return driver.NetServer(cmd.Context(), c)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&listen, "listen", nettest.DefaultListen, "ADDR:PORT to listen on (\":7878\" for every address)")
	fl.StringVar(&maxMessage, "max-message", "1m", "largest message accepted either way")
	fl.IntVar(&maxConns, "max-connections", nettest.DefaultMaxConns, "most clients served at once")
	fl.DurationVar(&duration, "duration", 0, "stop after this long (default: until Ctrl-C)")
	return cmd
}

// netClientFlags are `latscope nettest client`'s flags.
type netClientFlags struct {
	size, requestSize, replySize string
	mode                         string
	connections, window          int
	rate                         float64
	duration, interval, timeout  time.Duration
	format, output, record       string
	style                        mapStyleFlags
	plain                        bool
	serverTime                   time.Duration
	tps                          float64
	roundTrips                   int
}

func newNetClientCommand(env environment) *cobra.Command {
	var f netClientFlags
	cmd := &cobra.Command{
		Use:   "client HOST:PORT",
		Short: "Time round trips to a nettest server: live heat map, per-interval lines, percentiles",
		Long: `Time round trips to a latscope nettest server and show them as a live heat map (on a
terminal) or as per-interval lines like oratcptest's (throughput and latency, with p50,
p99 and max), then the summary: round trips, MB/s (requests, 10^6 bytes/s), mean,
p50/p90/p99/p99.9 and max.

Modes: sync (default) keeps one request in flight per connection, like a SQL round trip or
Data Guard SYNC; stream pipelines messages (at most --window unacknowledged) and times
each from send to acknowledgement; connect times TCP connection set-up only.

--rate makes an open loop: round trips start at that many per second (Poisson arrivals,
over all connections) and latency counts from the intended send time.

--server-time or --tps adds the what-if calculator: the calls per second one session
reaches at the measured round trip and at others (the server time is derived from a TPS
observed at this RTT as (1 s − RTT × TPS) / TPS).`,
		Example: `  latscope nettest client 127.0.0.1:7878
  latscope nettest client db01:7878 --size 250 --duration 1m -o net.html
  latscope nettest client db01:7878 --request-size 250 --reply-size 8k --connections 4
  latscope nettest client db01:7878 --size 250 --tps 2356 --format json
  latscope nettest client db01:7878 --rate 1000 --duration 30s`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("nettest client needs the server's HOST:PORT (see --help)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.config(env, cmd, args[0])
			if err != nil {
				return err
			}
			return driver.NetClient(cmd.Context(), c)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.size, "size", "256", "message size each way, bytes, including the 8-byte header (min 8, max 1m)")
	fl.StringVar(&f.requestSize, "request-size", "", "request size (default --size)")
	fl.StringVar(&f.replySize, "reply-size", "", "reply size (default --size; 8 in stream mode)")
	fl.StringVar(&f.mode, "mode", "sync", "sync, stream or connect")
	fl.IntVarP(&f.connections, "connections", "c", 1, "connections at once")
	fl.IntVar(&f.window, "window", nettest.DefaultWindow, "stream mode: most unacknowledged messages per connection")
	fl.Float64Var(&f.rate, "rate", 0, "open loop: round trips per second over all connections (Poisson arrivals)")
	fl.DurationVar(&f.duration, "duration", 10*time.Second, "how long to measure")
	fl.DurationVar(&f.interval, "interval", time.Second, "length of each interval (heat-map column, line)")
	fl.DurationVar(&f.timeout, "timeout", nettest.DefaultTimeout, "give up on a connect or a reply after this long")
	fl.StringVar(&f.format, "format", "table", "report on stdout: table or json")
	fl.StringVarP(&f.output, "output", "o", "", "write the report page with the heat maps (.html), the heat maps (.svg, .png) or the report (.json, .txt)")
	fl.StringVar(&f.record, "record", "", "also save the latency stream as a latscope recording (FILE.lsr)")
	f.style.register(cmd, "heat-map colour scale: linear or log")
	fl.BoolVar(&f.plain, "plain", false, "no live heat map: per-interval lines, then the summary")
	fl.DurationVar(&f.serverTime, "server-time", 0, "what-if: time the server spends per call, e.g. 400us")
	fl.Float64Var(&f.tps, "tps", 0, "what-if: calls per second one session reached at this RTT (derives the server time)")
	fl.IntVar(&f.roundTrips, "round-trips", 1, "what-if: network round trips per call")
	return cmd
}

// config maps the flags onto the driver's configuration.
func (f *netClientFlags) config(env environment, cmd *cobra.Command, addr string) (driver.NetClientConfig, error) {
	c := driver.NetClientConfig{
		Config: driver.Config{Stdin: env.stdin, Stdout: env.stdout, Stderr: env.stderr, StdoutTTY: env.stdoutTTY,
			StderrTTY: env.stderrTTY, Duration: f.duration},
		Format: f.format, Output: f.output, Record: f.record, Plain: f.plain,
		ServerTime: f.serverTime, TPS: f.tps, RoundTrips: f.roundTrips,
	}
	style, err := loadTestOutputFlags(f.format, f.style)
	if err != nil {
		return c, err
	}
	c.MapStyle = style
	mode, err := nettest.ParseMode(f.mode)
	if err != nil {
		return c, usageError{err}
	}
	size, err := sizeFlag("--size", f.size)
	if err != nil {
		return c, err
	}
	req, rep := size, size
	if f.requestSize != "" {
		if req, err = sizeFlag("--request-size", f.requestSize); err != nil {
			return c, err
		}
	}
	if f.replySize != "" {
		if rep, err = sizeFlag("--reply-size", f.replySize); err != nil {
			return c, err
		}
	} else if mode == nettest.Stream {
		rep = nettest.HeaderSize
	}
	switch {
	case f.duration <= 0 || f.interval <= 0 || f.timeout <= 0:
		return c, usagef("--duration, --interval and --timeout must be positive")
	case f.serverTime < 0 || f.tps < 0 || f.roundTrips < 1:
		return c, usagef("--server-time and --tps must not be negative, --round-trips at least 1")
	case f.serverTime > 0 && f.tps > 0:
		return c, usagef("give --server-time or --tps, not both")
	}
	c.Test = nettest.Config{
		Addr: addr, Mode: mode, Request: req, Reply: rep, Connections: f.connections, Rate: f.rate,
		Window: f.window, Interval: f.interval, Timeout: f.timeout,
	}
	return c, nil
}

// sizeFlag parses a message size flag; the test checks its range.
func sizeFlag(name, v string) (int, error) {
	n, err := bytesize.Parse(v)
	if err != nil {
		return 0, usagef("%s: %v", name, err)
	}
	if n > 1<<30 {
		return 0, usagef("%s %s is too large (at most 1m)", name, v)
	}
	return int(n), nil
}
