//go:build !linux

package rie

import "syscall"

// sysProcAttr is empty: without Pdeathsig (Linux only), an emulator outlives
// a process that is killed with SIGKILL. (The emulator itself runs only on
// Linux.)
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{} }
