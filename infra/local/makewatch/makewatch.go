// Package makewatch lets a long-running command that a make recipe execs
// (`make run`'s devstack, `make listen`) stop when that make is told to
// stop, as it does on a terminal's Ctrl-C.
//
// GNU make passes SIGTERM on to its children, but not SIGINT: it assumes
// they got it too, from the terminal, and waits for them. So `kill -INT`
// of the make process alone would leave the command running and make
// waiting forever. Make's fatal-signal handler first sets the signal back
// to its default action, which shows in /proc/<pid>/status (SigCgt) on
// Linux: Watch looks for that, and for make's exit.
package makewatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"syscall"
	"time"
)

// Interval is how often Watch looks at make.
const Interval = 100 * time.Millisecond

// fatalSignals are the signals on which GNU make runs its fatal-signal
// handler. The handler first sets the signal back to its default action,
// then (for SIGTERM only) passes it on to make's children, then waits for
// them, and at last raises the signal again on make itself.
var fatalSignals = []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// sigBit returns sig's bit in a signal mask of /proc/<pid>/status.
func sigBit(sig syscall.Signal) uint64 { return 1 << (uint(sig) - 1) }

// masks is what signalMasks reads of a process.
type masks struct {
	// caught and ignored are the signals the process catches and ignores.
	caught, ignored uint64
	// zombie reports a process that has exited and waits to be reaped.
	zombie bool
}

// errUnsupported is what signalMasks returns on a system where it cannot
// read another process's signal handling.
var errUnsupported = errors.New("signal masks of another process are not readable here")

// Watch watches the make process pid that runs the calling command, and
// sends why on the returned channel, once, when the command should stop
// for it:
//
//   - make exited: the command was re-parented, or pid is gone;
//   - make is handling a fatal signal (Linux): one of fatalSignals that make
//     caught when the watch began no longer is (make's handler has reset
//     it). This is how `kill -INT <make>` reaches the command. SIGTERM
//     needs no watch (make passes it on), but is watched as well.
//
// A make started with SIGINT ignored (`make run &` in a non-interactive
// shell) ignores kill -INT itself: nothing reaches make, so nothing can be
// seen; Watch logs so at the start. It stops looking when ctx is done.
func Watch(ctx context.Context, pid int, log *slog.Logger) <-chan string {
	ch := make(chan string, 1)
	child := os.Getppid() == pid
	var watched uint64
	switch m, err := signalMasks(pid); {
	case err == nil:
		for _, sig := range fatalSignals {
			watched |= m.caught & sigBit(sig)
		}
		if m.ignored&sigBit(syscall.SIGINT) != 0 {
			log.Warn("make ignores SIGINT (it was started in the background by a non-interactive shell): kill -INT of make does nothing; stop it with kill -TERM", "make", pid)
		}
	case errors.Is(err, errUnsupported):
	default:
		log.Warn("cannot watch make", "make", pid, "err", err)
	}
	go func() {
		tick := time.NewTicker(Interval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if why := makeStopping(pid, child, watched); why != "" {
				ch <- why
				return
			}
		}
	}()
	return ch
}

// makeStopping returns why the command should stop for make (pid), or "":
// child says whether the command started as make's child, watched which of
// make's caught signals to watch.
func makeStopping(pid int, child bool, watched uint64) string {
	if child && os.Getppid() != pid {
		return "make exited"
	}
	if !child && syscall.Kill(pid, 0) == syscall.ESRCH {
		return "make exited"
	}
	if watched == 0 {
		return ""
	}
	m, err := signalMasks(pid)
	if err != nil || m.zombie {
		return "make exited"
	}
	for _, sig := range fatalSignals {
		if watched&sigBit(sig) != 0 && m.caught&sigBit(sig) == 0 {
			return fmt.Sprintf("make got %s", signalName(sig))
		}
	}
	return ""
}

// signalName returns the SIG… name of sig.
func signalName(sig syscall.Signal) string {
	switch sig {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGQUIT:
		return "SIGQUIT"
	}
	return sig.String()
}

// Context returns a copy of parent that is done, once log has told why,
// when Watch(pid) says the command should stop for make. cancel releases
// the watch.
func Context(parent context.Context, pid int, log *slog.Logger) (ctx context.Context, cancel context.CancelFunc) {
	ctx, cancel = context.WithCancel(parent)
	stopping := Watch(ctx, pid, log)
	go func() {
		select {
		case why := <-stopping:
			log.Info(why)
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}
