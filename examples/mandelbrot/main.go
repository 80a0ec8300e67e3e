// Mandelbrot draws the Mandelbrot set with a work queue: the
// manager–worker pattern of MPI courses, for work whose pieces cost
// different amounts (rows through the set take far longer than rows
// outside it), where a fixed split would leave ranks idle.
//
// Rank 0, the manager, hands out rows. A worker sends the manager a
// message — at first a request, after that the row it just computed —
// and receives the number of its next row, or the word to stop. The
// manager receives from AnySource: whichever worker is done first is
// served first, and Status.Source says whom to answer. A finished row
// is also the request for the next one, so every message from a worker
// has the same shape, [row, count₀, count₁, …] (row −1: no row yet), and
// the manager posts one kind of receive for all of them.
//
// A pixel's value is the number of iterations of z ← z² + c before |z|
// exceeds 2 (at most -iter). The manager puts the rows together, counts
// who did how many, prints a checksum of the image and compares the image
// with one it computes sequentially; they must agree exactly, and the
// program exits non-zero if not. With one rank the manager computes every
// row itself.
//
// Run it with
//
//	go run ./examples/mandelbrot -n 4 -width 240 -height 120
//
// or as a job of separate processes under meshrun.
package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/meshmpi/meshmpi"
)

const (
	manager   = 0
	tagRow    = 1 // worker → manager: [row, counts…], row −1 to ask for the first
	tagTask   = 2 // manager → worker: [row], or [stop]
	stop, ask = -1, -1
)

// The part of the complex plane drawn.
const (
	xMin, xMax = -2.0, 0.6
	yMin, yMax = -1.2, 1.2
)

func main() {
	n := flag.Int("n", 4, "number of in-process ranks (a rank launched by meshrun joins its job instead)")
	width := flag.Int("width", 240, "image width in pixels")
	height := flag.Int("height", 120, "image height in pixels (rows)")
	maxIter := flag.Int("iter", 1000, "iterations at most per pixel")
	flag.Parse()
	if *width < 1 || *height < 1 || *maxIter < 1 {
		fmt.Fprintln(os.Stderr, "mandelbrot: -width, -height and -iter must be positive")
		os.Exit(2)
	}
	img := image{width: *width, height: *height, maxIter: *maxIter}
	err := meshmpi.Main(*n, func(world *meshmpi.Comm) error {
		if world.Rank() != manager {
			return work(world, img)
		}
		counts, byRank, err := manage(world, img)
		if err != nil {
			return err
		}
		return check(img, counts, byRank)
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "mandelbrot:", err)
		os.Exit(1)
	}
}

// image is the picture's geometry.
type image struct{ width, height, maxIter int }

// escape is the number of iterations of z ← z² + c, from z = 0, before
// |z| > 2, at most maxIter. The float64 conversions round each product
// on its own: without them a compiler may fuse a multiply and an add
// (arm64 does), and a rank on such a machine would count differently
// from a WASI or amd64 rank of the same job.
func escape(cr, ci float64, maxIter int) int32 {
	zr, zi := 0.0, 0.0
	for k := range maxIter {
		zr2, zi2 := float64(zr*zr), float64(zi*zi)
		if zr2+zi2 > 4 {
			return int32(k)
		}
		zr, zi = zr2-zi2+cr, float64(2*zr*zi)+ci
	}
	return int32(maxIter)
}

// row computes row y of img into counts.
func (img image) row(y int, counts []int32) {
	ci := yMax - (float64(y)+0.5)*(yMax-yMin)/float64(img.height)
	for x := range counts {
		cr := xMin + (float64(x)+0.5)*(xMax-xMin)/float64(img.width)
		counts[x] = escape(cr, ci, img.maxIter)
	}
}

// work is a worker: ask, then compute rows until told to stop.
func work(world *meshmpi.Comm, img image) error {
	msg := make([]int32, 1+img.width) // [row, counts…]
	task := []int32{0}
	msg[0] = ask
	for {
		if err := meshmpi.Send(world, msg, manager, tagRow); err != nil {
			return err
		}
		if _, err := meshmpi.Recv(world, task, manager, tagTask); err != nil {
			return err
		}
		if task[0] == stop {
			return nil
		}
		msg[0] = task[0]
		img.row(int(task[0]), msg[1:])
	}
}

// manage is the manager: it hands out every row and collects the
// results. It returns the image, row by row, and how many rows each rank
// computed.
func manage(world *meshmpi.Comm, img image) ([]int32, []int, error) {
	counts := make([]int32, img.width*img.height)
	byRank := make([]int, world.Size())
	if world.Size() == 1 { // no workers: do it all
		for y := range img.height {
			img.row(y, counts[y*img.width:(y+1)*img.width])
		}
		byRank[manager] = img.height
		return counts, byRank, nil
	}

	next := 0                   // the next row to hand out
	working := world.Size() - 1 // workers not yet told to stop
	msg := make([]int32, 1+img.width)
	for working > 0 {
		st, err := meshmpi.Recv(world, msg, meshmpi.AnySource, tagRow)
		if err != nil {
			return nil, nil, err
		}
		if y := int(msg[0]); y != ask {
			copy(counts[y*img.width:], msg[1:])
			byRank[st.Source]++
		}
		task := []int32{stop}
		if next < img.height {
			task[0] = int32(next)
			next++
		} else {
			working--
		}
		if err := meshmpi.Send(world, task, st.Source, tagTask); err != nil {
			return nil, nil, err
		}
	}
	return counts, byRank, nil
}

// checksum hashes the image (FNV-1a over the counts).
func checksum(counts []int32) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range counts {
		h = (h ^ uint64(uint32(c))) * 1099511628211
	}
	return h
}

// check compares the image with a sequential computation and prints it.
func check(img image, counts []int32, byRank []int) error {
	want := make([]int32, img.width*img.height)
	for y := range img.height {
		img.row(y, want[y*img.width:(y+1)*img.width])
	}
	inside := 0
	for _, c := range counts {
		if int(c) == img.maxIter {
			inside++
		}
	}
	per := make([]string, len(byRank))
	for r, k := range byRank {
		per[r] = fmt.Sprint(k)
	}
	fmt.Printf("%d×%d image, %d iterations at most, on %d ranks: rows by rank [%s]\n",
		img.width, img.height, img.maxIter, len(byRank), strings.Join(per, " "))
	fmt.Printf("%d pixels in the set, checksum %#016x (sequential %#016x)\n", inside, checksum(counts), checksum(want))
	if !slices.Equal(counts, want) {
		return fmt.Errorf("the image differs from the sequential one")
	}
	fmt.Println("ok")
	return nil
}
