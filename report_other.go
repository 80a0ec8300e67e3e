//go:build !unix

package meshmpi

// EnvReport asks a rank process for reports on a signal (see
// report_unix.go); without signals (windows, js, wasip1) nothing answers.
const EnvReport = "MESHMPI_REPORT"

func (s *Session) answerReports() {}
