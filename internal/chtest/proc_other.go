//go:build !linux

package chtest

import "syscall"

// sysProcAttr: elsewhere the server is stopped by the test's cleanup only.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
