//go:build unix

package host

import (
	"os/exec"
	"syscall"
)

// killGroup makes cmd's cancellation kill its whole process group: a
// credential helper git started must not outlive it, holding our pipes.
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
