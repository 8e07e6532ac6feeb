package chtest

import "syscall"

// sysProcAttr: the server dies with the test binary, even when a test that
// timed out gives it no cleanup.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
