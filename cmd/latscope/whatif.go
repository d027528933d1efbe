package main

import (
	"github.com/spf13/cobra"

	"github.com/latscope/latscope/driver"
)

func newWhatIfCommand(env environment) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "whatif",
		Short: "What-if calculators: synchronous and asynchronous replication over distance",
		Long: `What-if calculators from measured or given figures. "latscope nettest client --tps" is the
network one (a session's calls per second at other round-trip times); "whatif replication"
is the storage one (docs/whatif.md).`,
		Example: `  latscope whatif replication --distance 100km --io 8k --bandwidth 2Gbit`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return usagef("%s needs a calculator: replication; see --help", cmd.CommandPath())
		},
	}
	cmd.AddCommand(newReplicationCommand(env))
	return cmd
}

func newReplicationCommand(env environment) *cobra.Command {
	var f driver.ReplicationFlags
	cmd := &cobra.Command{
		Use:   "replication",
		Short: "Write time of synchronous mirroring over distance; how many I/Os fill an asynchronous pipe",
		Long: `Compute what distance does to replicated writes, as Christian Bilien's "physics of distance"
posts do (docs/whatif.md reproduces every figure of theirs).

Synchronous mirroring, one write after the other: round trips × RTT (light in fibre, 5 µs/km
one way: 2 × distance × 5 µs per round trip; 1 round trip for host-based mirroring such as
VxVM or ASM, 2 for SRDF-like array replication), plus the remote write at zero distance:
a fixed overhead plus a load time linear in the size, never shorter than the link's own
load time (size ÷ payload rate; 2 Gbit/s with 8b10b = 200 MB/s). Then I/O/s, MiB/s and the
share of the link used.

The remote write is the seed's model (0.6 ms + 0.027 ms/KiB, fitted to a DMX 1000's dd
writes) unless --remote-write gives it (0.5ms: an overhead; 0.6ms+0.027ms/k; or measured
points 2k=0.66ms,5k=0.74ms, fitted by least squares) or --iotest reads it from reports of
"latscope iotest --write --format json" (one report: its mean write time; several at
different --bs: fitted). --rtt replaces the fibre's round trip with a measured one: a
duration, or the mean of a "latscope nettest client --format json" report.

Asynchronous: the I/O's length in the fibre, how many I/Os the pipe holds and how many
outstanding I/Os fill it, the link's I/O/s, the I/Os in flight that saturate it (Little's
law), the limit set by --queue-depth or --bb-credits, and where asynchronous writes behave
synchronously. --write-rate offers a load (MB/s or iops): in flight, link used, whether the
stream keeps up, how fast the backlog grows and when --buffer is full.

--distance and --io take lists (10km,50km,100km; 2k,8k,128k). --format table|json|csv;
-o FILE writes by extension: .html (a page with a chart of write time against distance),
.json, .csv, else a table.`,
		Example: `  latscope whatif replication --distance 100km --io 8k --bandwidth 2Gbit
  latscope whatif replication --distance 50km --io 2k,16k,32k,64k,128k,256k,512k   # the seed's figure 1
  latscope whatif replication --distance 10km,50km,100km --round-trips 2 -o srdf.html
  latscope whatif replication --rtt nettest.json --iotest iotest-2k.json --iotest iotest-8k.json
  latscope whatif replication --distance 80km --io 8k --write-rate 60MB/s --queue-depth 8 --buffer 1g`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("%s takes no arguments, only flags (%q); see --help", cmd.CommandPath(), args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			f.DistanceSet = cmd.Flags().Changed("distance")
			plan, err := f.Plan()
			if err != nil {
				return usagef("%v", err)
			}
			return driver.WhatIfReplication(plan, env.stdout)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.Distances, "distance", "10km,50km,100km", "distances between the sites: km, m or mi, a list")
	fl.StringVar(&f.IO, "io", "2k,8k,128k", "write sizes, a list")
	fl.StringVar(&f.Bandwidth, "bandwidth", "2Gbit", "the link's line rate in bit/s: 2Gbit, 8Gbit, 1.5Mbit")
	fl.StringVar(&f.Encoding, "encoding", "8b10b", "the link's line code: 8b10b (FC up to 8G), 64b66b (10G, 16G FC and up) or none")
	fl.Float64Var(&f.FibreUSPerKm, "fibre-us-per-km", 5, "light's one-way delay in fibre, µs per km")
	fl.IntVar(&f.RoundTrips, "round-trips", 1, "protocol round trips per write: 1 host-based mirroring (VxVM, ASM), 2 SRDF-like array replication")
	fl.StringVar(&f.RemoteWrite, "remote-write", "", "remote write time at zero distance: 0.5ms, 0.6ms+0.027ms/k or 2k=0.66ms,5k=0.74ms (default the seed's 0.6ms+0.027ms/k)")
	fl.StringArrayVar(&f.IOTests, "iotest", nil, "remote write time from a latscope iotest --write --format json report (repeat for several sizes)")
	fl.StringVar(&f.RTT, "rtt", "", "measured round trip instead of the distance: a duration (0.4ms) or a latscope nettest client --format json report")
	fl.StringVar(&f.WriteRate, "write-rate", "", "offered asynchronous write rate: MB/s (60MB/s, MiB) or I/Os per second (2000iops)")
	fl.IntVar(&f.QueueDepth, "queue-depth", 0, "most outstanding I/Os the host or array allows (8: HP-UX per SCSI target, 32: HP EVA; 0: no limit)")
	fl.IntVar(&f.BBCredits, "bb-credits", 0, "the link's buffer-to-buffer credits, one 2 KiB frame each per round trip (0: no limit)")
	fl.StringVar(&f.Buffer, "buffer", "", "asynchronous replication buffer (journal) that absorbs a backlog, e.g. 1g (with --write-rate)")
	fl.StringVar(&f.Format, "format", "table", "stdout format: table, json or csv")
	fl.StringVarP(&f.Output, "output", "o", "", "write to FILE (.html, .json, .csv, else a table) instead of stdout")
	return cmd
}
