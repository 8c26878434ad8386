package stack

import "syscall"

// sysProcAttr puts a child in its own process group and has the kernel kill
// it when the process that started it dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
