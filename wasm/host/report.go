//go:build !js && !wasip1

package host

import (
	"sync"

	"github.com/meshmpi/meshmpi/wasm"
)

// Reports lets a launcher ask a guest what it is blocked in: the guest
// prints the report its --timeout prints on its standard error and
// carries on (wasm's report message). Only a guest that said it answers
// (report-ready, once its host offered it: wasm.EnvOffers) is asked; a
// guest built before the report messages never says so, and Ask reports
// false for it, as for a guest that has not joined its job yet or left
// it. The zero value is ready to use; give the same one to every run of
// a rank (Rank.Reports, Config.Reports).
type Reports struct {
	mu sync.Mutex
	r  *relay // the relay whose guest said report-ready; nil while none
}

// Ask asks the guest for its report, and reports whether it was asked.
func (q *Reports) Ask() bool {
	q.mu.Lock()
	r := q.r
	q.mu.Unlock()
	return r != nil && r.askReport()
}

// set records r's guest as answering (r nil: it left, if it was old's).
func (q *Reports) set(r, old *relay) {
	if q == nil {
		return
	}
	q.mu.Lock()
	if q.r == old {
		q.r = r
	}
	q.mu.Unlock()
}

// askReport sends the guest a report request, unless it left.
func (r *relay) askReport() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	r.push(wasm.AppendReport(r.out.lock()))
	return true
}
