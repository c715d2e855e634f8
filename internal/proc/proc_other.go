//go:build !unix

package proc

import "os/exec"

func setProcessGroup(*exec.Cmd) {}

// killGroup kills the child; without Unix process groups its descendants are
// not reached, and WaitDelay still bounds Wait.
func killGroup(cmd *exec.Cmd, _ bool) error { return cmd.Process.Kill() }
