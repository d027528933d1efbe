package runs

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// process is one running child, in its own process group.
type process struct {
	cmd   *exec.Cmd
	out   *os.File
	grace time.Duration
	done  chan struct{}
	// stopped is set by stop, called once under the executor's lock.
	stopped bool
}

// startProcess starts bin with a step's arguments in the run's directory:
// stdin empty, stdout to the step's output file or the log, stderr to the
// log, a minimal environment (the server's secrets stay with it).
func startProcess(bin string, s step, dir string, log io.Writer, grace time.Duration) (*process, error) {
	cmd := exec.Command(bin, s.args...)
	cmd.Dir, cmd.Env, cmd.Stderr, cmd.Stdout = dir, childEnv(), log, log
	cmd.SysProcAttr = childAttr()
	// Wait gives up on the log pipes this long after the child ended, if
	// a grandchild kept them open.
	cmd.WaitDelay = grace
	p := &process{cmd: cmd, grace: grace, done: make(chan struct{})}
	if s.stdout != "" {
		f, err := os.OpenFile(filepath.Join(dir, s.stdout), os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
		if err != nil {
			return nil, fmt.Errorf("run output: %w", err)
		}
		cmd.Stdout, p.out = f, f
	}
	if err := cmd.Start(); err != nil {
		if p.out != nil {
			p.out.Close()
		}
		return nil, fmt.Errorf("starting latscope: %w", err)
	}
	return p, nil
}

// wait waits for the child, then kills whatever it left in its group, and
// returns its exit code (-1: ended by a signal).
func (p *process) wait() int {
	_ = p.cmd.Wait() // the exit status is in ProcessState
	close(p.done)
	signalGroup(p.cmd.Process.Pid, true)
	if p.out != nil {
		p.out.Close()
	}
	if p.cmd.ProcessState == nil {
		return -1
	}
	return p.cmd.ProcessState.ExitCode()
}

// stop sends SIGTERM to the group, so the child cleans up (iotest removes
// its scratch file, flame its perf.data), then SIGKILL after the grace
// period if it has not ended.
func (p *process) stop() {
	p.stopped = true
	signalGroup(p.cmd.Process.Pid, false)
	go func() {
		select {
		case <-p.done:
		case <-time.After(p.grace):
			signalGroup(p.cmd.Process.Pid, true)
		}
	}()
}

// childEnv passes on only what latscope and perf need to run.
func childEnv() []string {
	env := []string{"TERM=dumb"}
	for _, k := range []string{"PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "TZ"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}
