//go:build wasip1

package meshmpi

import "github.com/meshmpi/meshmpi/wasm"

// answerReports answers the host's report requests for a guest that is
// this rank: a guest has no signals, so its host asks over their stream
// (package wasm's report message), when the host offers it.
func (s *Session) answerReports() {
	if g, ok := s.mesh.(*wasm.Guest); ok {
		g.OnReport(s.printReport)
	}
}
