//go:build unix && !js && !wasip1

package browsertest

import (
	"os/exec"
	"syscall"
)

// ownGroup makes cmd the leader of a new process group, which its
// children (a browser's content, GPU and socket processes) join.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills the process group that cmd leads.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
