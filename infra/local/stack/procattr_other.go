//go:build unix && !linux

package stack

import "syscall"

// sysProcAttr puts a child in its own process group. Without Pdeathsig
// (Linux only), a child outlives a parent that is killed with SIGKILL.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
