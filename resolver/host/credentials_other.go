//go:build !unix

package host

import "os/exec"

// killGroup: elsewhere only git itself is killed; cmd.WaitDelay bounds
// the wait for a helper holding the pipes.
func killGroup(*exec.Cmd) {}
