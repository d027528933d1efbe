package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/latscope/latscope/scripts/benchkit"
)

// workload is what perf records: a Go build of two of latscope's packages
// with an empty build cache (-a: the compiler and linker over a few dozen
// standard packages, deep Go stacks with frame pointers, many processes)
// then gzip and sort over random data (C code, libc, pipes and the
// kernel's read and write paths). It runs from the repository's root with
// GOCACHE set to a fresh directory. About 5–15 s on two busy cores.
const workload = `go build -a ./hist ./stream && head -c 24000000 /dev/urandom | gzip -1 | sort > /dev/null`

// Files in the input directory.
const (
	perfDataName  = "perf.data"
	recordingName = "perf-script-1x.txt" // perf script of one recording
	inputName     = "perf-script.txt"    // the recording repeated
)

// inputFacts describe the input both tools collapse.
type inputFacts struct {
	Path             string  `json:"path"`
	Bytes            int64   `json:"bytes"`
	Copies           int     `json:"copies"`
	RecordingPath    string  `json:"recording_path"`
	RecordingBytes   int64   `json:"recording_bytes"`
	Samples          int64   `json:"samples"`
	DistinctStacks   int     `json:"distinct_stacks"`
	Workload         string  `json:"workload"`
	Record           string  `json:"record_command"`
	RecordSeconds    float64 `json:"record_s,omitempty"`
	Reused           bool    `json:"reused_cached_file"`
	RecordingSamples int64   `json:"recording_samples"`
}

// recordCommand is the perf record command line for output file data.
func recordCommand(data string) []string {
	return []string{"perf", "record", "-F", "999", "-g", "-e", "cpu-clock", "-o", data, "--", "sh", "-c", workload}
}

// prepareInput returns the perf script text to collapse: dir's when it is
// already large enough, else recorded (when dir has no recording yet) and
// repeated until at least mb MiB.
func prepareInput(ctx context.Context, c config, dir string, stderr io.Writer) (inputFacts, error) {
	in := inputFacts{
		Path:          filepath.Join(dir, inputName),
		RecordingPath: filepath.Join(dir, recordingName),
		Workload:      workload,
	}
	data := filepath.Join(dir, perfDataName)
	in.Record = fmt.Sprintf("%q", recordCommand(data))
	want := int64(c.mb) << 20
	recording, err := os.Stat(in.RecordingPath)
	if err != nil {
		if in.RecordSeconds, err = record(ctx, c.Repo, dir, data, stderr); err != nil {
			return in, err
		}
		if err := perfScript(ctx, data, in.RecordingPath); err != nil {
			return in, err
		}
		if recording, err = os.Stat(in.RecordingPath); err != nil {
			return in, err
		}
	}
	in.RecordingBytes = recording.Size()
	if in.RecordingBytes == 0 {
		return in, fmt.Errorf("%s is empty: perf recorded no samples", in.RecordingPath)
	}
	in.Copies = copiesFor(want, in.RecordingBytes)
	big, err := os.Stat(in.Path)
	in.Reused = err == nil && big.Size() == int64(in.Copies)*in.RecordingBytes
	if in.Reused {
		fmt.Fprintf(stderr, "flamebench: reusing %s\n", in.Path)
	} else if err := repeatFile(in.RecordingPath, in.Path, in.Copies); err != nil {
		return in, err
	}
	in.Bytes = int64(in.Copies) * in.RecordingBytes
	if in.RecordingSamples, err = countSamplesFile(in.RecordingPath); err != nil {
		return in, err
	}
	in.Samples = in.RecordingSamples * int64(in.Copies)
	return in, nil
}

// record runs the workload under perf record from the repository's root,
// with a fresh Go build cache removed afterwards.
func record(ctx context.Context, repo, dir, data string, stderr io.Writer) (float64, error) {
	if _, err := exec.LookPath("perf"); err != nil {
		return 0, fmt.Errorf("perf not found (%v): install it (apt-get install linux-perf) or give -dir with a %s", err, recordingName)
	}
	gocache, err := os.MkdirTemp(dir, "gocache-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(gocache)
	argv := recordCommand(data)
	fmt.Fprintf(stderr, "flamebench: recording %s\n", workload)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "GOCACHE="+gocache, "GOFLAGS=")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("perf record failed (%v): run as root, or lower /proc/sys/kernel/perf_event_paranoid; output:%s",
			err, benchkit.Indent(benchkit.Tail(out.Bytes(), 10)))
	}
	return time.Since(start).Seconds(), nil
}

// perfScript writes `perf script -i data` to out.
func perfScript(ctx context.Context, data, out string) error {
	return benchkit.WriteFile(out, func(w io.Writer) error {
		var errOut bytes.Buffer
		cmd := exec.CommandContext(ctx, "perf", "script", "-i", data)
		cmd.Stdout, cmd.Stderr = w, &errOut
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("perf script -i %s: %v%s", data, err, benchkit.Indent(benchkit.Tail(errOut.Bytes(), 10)))
		}
		return nil
	})
}

// copiesFor is how many copies of a size-byte file make at least want
// bytes (at least one).
func copiesFor(want, size int64) int {
	if size <= 0 {
		return 1
	}
	return int(max(1, (want+size-1)/size))
}

// repeatFile writes copies of src one after the other into dst.
func repeatFile(src, dst string, copies int) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return benchkit.WriteFile(dst, func(w io.Writer) error {
		for range copies {
			if _, err := w.Write(b); err != nil {
				return err
			}
		}
		return nil
	})
}

func countSamplesFile(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n, err := countSamples(f)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return n, nil
}

// countSamples counts perf script's samples: a sample is a header line
// then its stack's frames (indented, except in some old perf versions),
// and samples are separated by blank lines; lines starting with '#' are
// perf's header comments. So a sample starts at the first line that is
// neither blank nor a comment after a blank line (or the start).
func countSamples(r io.Reader) (int64, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	var n int64
	atStart, inSample := true, false
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			if atStart {
				switch {
				case len(bytes.TrimSpace(line)) == 0 && (err == nil || err == io.EOF):
					inSample = false
				case line[0] == '#' || inSample:
				default:
					n++
					inSample = true
				}
			}
			atStart = line[len(line)-1] == '\n'
		}
		switch err {
		case nil, bufio.ErrBufferFull:
		case io.EOF:
			return n, nil
		default:
			return n, err
		}
	}
}
