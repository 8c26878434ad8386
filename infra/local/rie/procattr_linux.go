package rie

import "syscall"

// sysProcAttr has the kernel stop the emulator (which kills the bootstrap)
// when the process that started it dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
