//go:build windows

package main

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// stopSignals are the events that stop the job: Ctrl-C and Ctrl-Break
// (os.Interrupt), and a closed console, a logoff or a shutdown (which Go
// delivers as SIGTERM).
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM}

// exeSuffix ends the name of a native executable meshrun builds: Windows
// runs a file by its extension.
const exeSuffix = ".exe"

// watchStops returns nil, which never receives: Windows has no SIGCHLD
// and no stopped processes to find (processStopped is always false).
func watchStops() (<-chan os.Signal, func()) { return nil, func() {} }

// terminate ends the rank process p: Windows has no SIGTERM to send to
// another process, so it is killed (TerminateProcess) at once. Its own
// child processes are not: Windows has no process groups.
func terminate(p *os.Process) error { return p.Kill() }

// kill ends the rank process p, as terminate does.
func kill(p *os.Process) error { return p.Kill() }

// interruptGroup kills go when the context ends (Windows has neither
// process groups nor SIGINT for another process); the compilers it runs
// end on their own.
func interruptGroup(cmd *exec.Cmd) {
	cmd.Cancel = func() error { return cmd.Process.Kill() }
	cmd.WaitDelay = 5 * time.Second
}

// isExecutable reports whether path may be run: its extension is one of
// PATHEXT's (.exe, .bat …), as the shell decides.
func isExecutable(path string, info fs.FileInfo) bool {
	ext := strings.ToLower(filepath.Ext(path))
	if ext == "" || info.IsDir() {
		return false
	}
	exts := os.Getenv("PATHEXT")
	if exts == "" {
		exts = ".com;.exe;.bat;.cmd"
	}
	for _, e := range strings.Split(strings.ToLower(exts), ";") {
		if e == ext {
			return true
		}
	}
	return false
}

// reportSignals is empty: Windows has no SIGQUIT (Ctrl-Break stops the
// job); --report-hang still asks.
var reportSignals []os.Signal

// askReport cannot ask a rank process on Windows, which has no signals
// to send it.
func askReport(*os.Process) error { return errNoReportSignal }
