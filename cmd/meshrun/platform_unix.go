//go:build unix

package main

import (
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/meshmpi/meshmpi"
)

// stopSignals are the signals that stop the job: Ctrl-C, kill(1)'s
// default and a closed terminal.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// exeSuffix ends the name of a native executable meshrun builds.
const exeSuffix = ""

// watchStops returns a channel that receives when a child process of
// meshrun stopped (or changed state otherwise: SIGCHLD), and the function
// that stops the watch.
func watchStops() (<-chan os.Signal, func()) {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGCHLD)
	return c, func() { signal.Stop(c) }
}

// terminate asks the rank process p and its process group to end:
// SIGTERM, then SIGCONT, since a stopped rank acts on SIGTERM only once it
// runs.
func terminate(p *os.Process) error {
	err := syscall.Kill(-p.Pid, syscall.SIGTERM)
	_ = syscall.Kill(-p.Pid, syscall.SIGCONT)
	return err
}

// kill ends the rank process p and its process group at once (SIGKILL).
func kill(p *os.Process) error { return syscall.Kill(-p.Pid, syscall.SIGKILL) }

// interruptGroup gives go and the compilers it runs an interrupt when the
// context ends, in a process group of their own; go itself is killed if
// it has not ended 5 s later.
func interruptGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) }
	cmd.WaitDelay = 5 * time.Second
}

// isExecutable reports whether the file described by info may be run: an
// execute permission bit is set.
func isExecutable(path string, info fs.FileInfo) bool { return info.Mode()&0o111 != 0 }

// reportSignals ask meshrun what every rank is blocked in (hang.go).
var reportSignals = []os.Signal{syscall.SIGQUIT}

// askReport asks the rank process p (not its group: the rank's own
// children are not ranks) for its report: meshmpi.ReportSignal, which
// a process that is not listening ignores.
func askReport(p *os.Process) error { return p.Signal(meshmpi.ReportSignal) }
