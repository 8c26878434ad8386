package footprint

import "syscall"

// sysProcAttr has the kernel kill a started bootstrap when footprint dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
