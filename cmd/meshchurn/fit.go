//go:build unix

package main

import (
	"math"
	"slices"
)

// collinear is the squared correlation of time and live ranks above
// which fit gives up separating them and fits time alone.
const collinear = 0.95

// fit fits y = a + b·t + c·l by least squares and returns b, the trend in
// time with the live ranks' part taken out, and c, the part of y each
// live rank accounts for. When l does not vary, or varies with t alone
// (squared correlation above collinear), it fits y = a + b·t and c is 0:
// then all of y's growth counts as growth in time. Fewer than two points
// have no trend.
func fit(t, l, y []float64) (b, c float64) {
	n := len(t)
	if n < 2 {
		return 0, 0
	}
	mt, ml, my := mean(t), mean(l), mean(y)
	var stt, sll, stl, sty, sly float64
	for i := range n {
		dt, dl, dy := t[i]-mt, l[i]-ml, y[i]-my
		stt += dt * dt
		sll += dl * dl
		stl += dt * dl
		sty += dt * dy
		sly += dl * dy
	}
	if stt == 0 {
		return 0, 0
	}
	det := stt*sll - stl*stl
	if sll == 0 || det <= (1-collinear)*stt*sll {
		return sty / stt, 0
	}
	return (sll*sty - stl*sly) / det, (stt*sly - stl*sty) / det
}

func mean(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// drift is y's growth, robustly: the least value of its last third minus
// the least of its first third, a rise of its floor. What comes and goes
// only adds to a resource (a link coming up or going down holds its
// goroutines a while longer, a heap not yet collected holds garbage), so
// a leak raises the floor and a transient does not. Samples whose
// live-rank count l is not the most common one are left out when each
// third keeps at least two without them: a resource that follows the
// live ranks (a link's goroutines, a connection's socket) then compares
// like with like. Fewer than two samples have no drift.
func drift(l, y []float64) float64 {
	if len(y) < 2 {
		return 0
	}
	first, last := floors(l, y)
	return last - first
}

// floors are the least values of y's first and last thirds, as drift
// takes them; NaN for no samples.
func floors(l, y []float64) (first, last float64) {
	if len(y) == 0 {
		return math.NaN(), math.NaN()
	}
	counts := map[float64]int{}
	mode, best := 0.0, 0
	for _, v := range l {
		counts[v]++
		if c := counts[v]; c > best || c == best && v > mode {
			mode, best = v, c
		}
	}
	var keep []float64
	for i, v := range l {
		if v == mode {
			keep = append(keep, y[i])
		}
	}
	if len(keep) < 6 {
		keep = y
	}
	third := max(1, len(keep)/3)
	return slices.Min(keep[:third]), slices.Min(keep[len(keep)-third:])
}
