package stack

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Process is a child process started in its own process group, so that
// stopping it also stops whatever it started, and (on Linux) killed by the
// kernel when the process that started it dies.
type Process struct {
	// Name names the process in errors and logs.
	Name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error // the result of Wait, valid once done is closed
}

// StartProcess starts argv in dir with env added to the current
// environment. Its output goes to logFile (appended) when logFile is set,
// and to the current process's stdout and stderr otherwise.
func StartProcess(name, dir, logFile string, env []string, argv ...string) (*Process, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = sysProcAttr()
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if logFile != "" {
		f, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, fmt.Errorf("%s: open log: %w", name, err)
		}
		defer f.Close() // the child keeps its own copy
		cmd.Stdout, cmd.Stderr = f, f
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &Process{Name: name, cmd: cmd, log: logFile, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Err returns how the process ended; call it after Done is closed.
func (p *Process) Err() error { return p.err }

// Pid returns the process id, which is also its process group id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Stop sends SIGTERM to the process group, then SIGKILL after grace, and
// waits until the process has exited. It is safe to call more than once.
func (p *Process) Stop(grace time.Duration) {
	select {
	case <-p.done:
		killGroup(p.cmd.Process.Pid, syscall.SIGKILL) // leftovers of the group, if any
		return
	default:
	}
	killGroup(p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
	}
	killGroup(p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
}

// exitError describes an unexpected exit with the end of the log.
func (p *Process) exitError() error {
	msg := fmt.Sprintf("%s exited: %v", p.Name, p.err)
	if p.err == nil {
		msg = p.Name + " exited"
	}
	if tail := logTail(p.log, 15); tail != "" {
		msg += "; the end of " + p.log + ":\n" + tail
	}
	return errors.New(msg)
}

func killGroup(pid int, sig syscall.Signal) {
	if err := syscall.Kill(-pid, sig); err != nil {
		syscall.Kill(pid, sig)
	}
}

// logTail returns the last n lines of the file at path, or "".
func logTail(path string, n int) string {
	if path == "" {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const max = 8 << 10
	if st, err := f.Stat(); err == nil && st.Size() > max {
		f.Seek(-max, io.SeekEnd)
	}
	b, _ := io.ReadAll(f)
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// Signal sends sig to the process group.
func (p *Process) Signal(sig syscall.Signal) {
	killGroup(p.cmd.Process.Pid, sig)
}
