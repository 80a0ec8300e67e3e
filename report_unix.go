//go:build unix

package meshmpi

import (
	"os"
	"os/signal"
	"syscall"
)

// ReportSignal asks a rank process launched with EnvReport for its
// report. It is SIGWINCH because that signal's default action is to
// ignore it: a process that is not listening (not yet in a job, or no
// meshmpi program at all) is unharmed by the question.
const ReportSignal = syscall.SIGWINCH

// answerReports answers ReportSignal for a process that is this rank,
// when the launcher asked for it (EnvReport).
func (s *Session) answerReports() {
	if os.Getenv(EnvReport) != "1" {
		return
	}
	c := make(chan os.Signal, 1)
	signal.Notify(c, ReportSignal)
	go func() {
		for range c {
			s.printReport()
		}
	}()
}
