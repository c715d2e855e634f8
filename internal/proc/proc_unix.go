//go:build unix

package proc

import (
	"os/exec"
	"syscall"
)

func setProcessGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// killGroup sends SIGKILL to the child's process group (its pid, as Setpgid
// made it the group leader), or to the child alone in the foreground.
func killGroup(cmd *exec.Cmd, foreground bool) error {
	if foreground {
		return cmd.Process.Kill()
	}
	return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}
