//go:build unix

package meshmpi

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// EnvReport, set to 1 by a launcher (meshrun), makes a rank process
// answer ReportSignal with what it is blocked in, the report that
// EnvTimeout prints, on one line of its standard error, and carry on:
//
//	meshmpi: rank 2 is blocked in Recv(from rank 1, tag 7) on world: waiting for a message from rank 1
//	meshmpi: rank 0 is running, not blocked in meshmpi
//
// meshrun asks every rank on SIGQUIT and --report-hang. A WASI guest has
// no signals and a browser rank is no launcher's child: neither answers.
const EnvReport = "MESHMPI_REPORT"

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
			what := s.p.report()
			if what == "" {
				what = "running, not blocked in meshmpi"
			} else {
				what = "blocked in " + what
			}
			fmt.Fprintf(os.Stderr, "meshmpi: rank %d is %s\n", s.p.world.rank, what)
		}
	}()
}
