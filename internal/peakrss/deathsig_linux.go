package peakrss

import "syscall"

// dieWithParent kills the command when the helper dies (Run's context
// kills the helper).
func dieWithParent() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
