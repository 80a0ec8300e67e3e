//go:build !unix && !wasip1

package meshmpi

// answerReports: without signals (windows, js) nothing asks a rank
// process for its report (report_unix.go; a WASI guest's host asks it
// over their stream: report_wasip1.go).
func (s *Session) answerReports() {}
