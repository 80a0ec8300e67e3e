package meshmpi

import (
	"fmt"
	"os"
)

// EnvReport, set to 1 by a launcher (meshrun), makes a rank process
// answer ReportSignal with what it is blocked in, the report that
// EnvTimeout prints, on one line of its standard error, and carry on:
//
//	meshmpi: rank 2 is blocked in Recv(from rank 1, tag 7) on world: waiting for a message from rank 1
//	meshmpi: rank 0 is running, not blocked in meshmpi
//
// meshrun asks every rank on SIGQUIT and --report-hang. A WASI guest has
// no signals: its host asks it over their stream instead (package
// wasm's report message), whenever the host offers that, with or without
// EnvReport. A browser rank is no launcher's child: it does not answer.
const EnvReport = "MESHMPI_REPORT"

// printReport prints the rank's answer to a report request (EnvReport).
func (s *Session) printReport() {
	what := s.p.report()
	if what == "" {
		what = "running, not blocked in meshmpi"
	} else {
		what = "blocked in " + what
	}
	fmt.Fprintf(os.Stderr, "meshmpi: rank %d is %s\n", s.p.world.rank, what)
}
