package driver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/latscope/latscope/audit/correlate"
	"github.com/latscope/latscope/input"
	"github.com/latscope/latscope/view/audittimeline"
)

// AuditConfig is `latscope audit`'s configuration.
type AuditConfig struct {
	Files  []string
	Filter correlate.Filter
	// Options: the year of classic syslog stamps, the windows of the links,
	// --input-format and the standard input of FILE "-".
	Options correlate.Options
	// Format: table, json (one document) or jsonl (one chain a line, for a
	// log pipeline).
	Format string
	// Follow keeps reading the files (and the Oracle audit files new in
	// directories given) and prints each new chain once.
	Follow        bool
	FollowOptions correlate.FollowOptions
	// Output: a file written in its extension's format (.html: the
	// timeline page, .json, .jsonl, else the table) instead of stdout.
	Output string
	Stdout io.Writer
	Stderr io.Writer
}

// AuditReport is `latscope audit --format json`'s document.
type AuditReport struct {
	Files  []correlate.FileSummary `json:"files"`
	Chains []correlate.Chain       `json:"chains"`
}

// ParseAuditTime reads --since/--until: RFC 3339, or "2006-01-02 15:04:05",
// "2006-01-02T15:04" or "2006-01-02" in UTC.
func ParseAuditTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	for _, layout := range []string{"2006-01-02 15:04:05", "2006-01-02T15:04:05", "2006-01-02 15:04", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q: want RFC 3339 (2026-11-20T10:00:00Z) or 2026-11-20 10:00[:00] (UTC)", s)
}

// Audit reads the files and prints every subject's chain.
func Audit(ctx context.Context, ac AuditConfig) error {
	diag := input.NewDiagnostics(ac.Stderr, input.DefaultReportLimit)
	if ac.Follow {
		return followAudit(ctx, ac, diag)
	}
	m, err := correlate.Load(ctx, ac.Files, diag, ac.Options)
	if err != nil {
		return err
	}
	chains := m.Chains(ac.Filter)
	defer diag.PrintSummary(ac.Stderr)
	return writeOutput(ac.Output, ac.Stdout, ac.Format, func(w *bufio.Writer, format string) error {
		if ac.Output != "" {
			format = auditFormatOfPath(ac.Output)
		}
		switch format {
		case "html":
			return audittimeline.Write(w, audittimeline.Report{Files: m.Files, Chains: chains,
				Problems: diag.Problems(), Warnings: diag.Warnings()})
		case "jsonl":
			enc := json.NewEncoder(w)
			for _, c := range chains {
				if err := enc.Encode(c); err != nil {
					return err
				}
			}
			return nil
		case "json":
			enc := json.NewEncoder(w)
			enc.SetIndent("", "  ")
			if chains == nil {
				chains = []correlate.Chain{}
			}
			return enc.Encode(AuditReport{Files: m.Files, Chains: chains})
		}
		return writeAuditTable(w, m.Files, chains)
	})
}

// auditFormatOfPath is formatOfPath with .jsonl; a .csv has no audit format.
func auditFormatOfPath(path string) string {
	if strings.EqualFold(filepath.Ext(path), ".jsonl") {
		return "jsonl"
	}
	return formatOfPath(path)
}

// AuditInputFormats are --input-format's names.
func AuditInputFormats() []string { return correlate.InputFormats() }

// CheckAuditOutput refuses an -o file whose extension names no audit
// format, before any file is read.
func CheckAuditOutput(path string) error {
	if path != "" && auditFormatOfPath(path) == "csv" {
		return fmt.Errorf("-o %s: latscope audit writes .html, .json, .jsonl or a text table, not CSV", path)
	}
	return nil
}

func writeAuditTable(w io.Writer, files []correlate.FileSummary, chains []correlate.Chain) error {
	var b strings.Builder
	for _, f := range files {
		unit := "records"
		if f.Format == "linux-audit" {
			unit = "events"
		}
		fmt.Fprintf(&b, "# %s: %s, %d %s read, %d kept\n", f.Name, f.Format, f.Read, unit, f.Kept)
	}
	if len(chains) == 0 {
		b.WriteString("no database start, stop, SYSDBA/SYSOPER connection or clusterware command in the files read\n")
	}
	for _, c := range chains {
		writeChain(&b, c)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// followAudit prints each chain as Follow hands it on: a JSON line, or
// the table's block.
func followAudit(ctx context.Context, ac AuditConfig, diag *input.Diagnostics) error {
	fo := ac.FollowOptions
	fo.Options = ac.Options
	enc := json.NewEncoder(ac.Stdout)
	err := correlate.Follow(ctx, ac.Files, diag, fo, func(c correlate.Chain) error {
		if !ac.Filter.Match(c.Subject) {
			return nil
		}
		if ac.Format == "jsonl" {
			return enc.Encode(c)
		}
		var b strings.Builder
		writeChain(&b, c)
		_, err := io.WriteString(ac.Stdout, b.String())
		return err
	})
	diag.PrintSummary(ac.Stderr)
	return err
}

// writeChain writes a chain's block of the table.
func writeChain(b *strings.Builder, c correlate.Chain) {
	{
		s := c.Subject
		b.WriteString("\n")
		what := s.Action
		if s.Command != "" {
			what += ": " + s.Command
		}
		fmt.Fprintf(b, "%s  %s  %s  %s", s.Time.UTC().Format("2006-01-02 15:04:05Z"), orDash(s.Host), orDash(s.DB), what)
		if s.Privilege != "" {
			fmt.Fprintf(b, " (%s)", s.Privilege)
		}
		fmt.Fprintf(b, "  [%s:%d]\n", s.Source, s.Line)
		if c.Login != nil {
			fmt.Fprintf(b, "  who: %s", orDash(c.Login.User))
			if c.Login.Addr != "" {
				fmt.Fprintf(b, " from %s", c.Login.Addr)
				if c.Login.Port != 0 {
					fmt.Fprintf(b, " port %d", c.Login.Port)
				}
			}
			fmt.Fprintf(b, ", login %s, auid %s ses %s — %s\n", c.Login.Time.UTC().Format("15:04:05Z"), orDash(c.Login.AUID), c.Login.Session, c.Confidence)
		} else {
			fmt.Fprintf(b, "  who: unknown — %s\n", c.Confidence)
		}
		tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
		for _, l := range c.Links {
			at := ""
			if !l.Time.IsZero() {
				at = l.Time.UTC().Format("15:04:05Z")
			}
			src := ""
			if l.Source != "" {
				src = fmt.Sprintf("[%s:%d]", l.Source, l.Line)
			}
			fmt.Fprintf(tw, "  link\t%s\t%s\t%s\t%s\n", l.Confidence, at, l.What, src)
		}
		for _, st := range c.Steps {
			fmt.Fprintf(tw, "  step\t%s\n", st)
		}
		for _, cand := range c.Candidates {
			who := "unknown"
			if l := cand.Login; l != nil {
				who = fmt.Sprintf("%s from %s, ses %s", orDash(l.User), orDash(l.Addr), l.Session)
			}
			fmt.Fprintf(tw, "  candidate\t%s\t%s\t%s → %s\t[%s:%d]\n", cand.Link.Confidence, cand.Link.Time.UTC().Format("15:04:05Z"), cand.Link.What, who, cand.Link.Source, cand.Link.Line)
		}
		tw.Flush()
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
