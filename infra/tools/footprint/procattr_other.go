//go:build !linux

package footprint

import "syscall"

// sysProcAttr is empty: without Pdeathsig (Linux only), a bootstrap
// outlives a footprint that is killed with SIGKILL.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
