// Kmeans clusters points in the plane with k-means (Lloyd's algorithm),
// the points split over the ranks: the data-parallel pattern of MPI
// courses, where each rank works on its own data and collectives combine
// a little of it.
//
// Each rank makes its own block of the -points points (point i is a hash
// of i, near one of k hidden centres; blocks differ in length by at most
// one), so no input travels. Every rank starts from the same k centroids,
// the first k points. Then, every iteration:
//
//  1. each rank assigns each of its points to the nearest centroid and
//     adds the point to that cluster's coordinate sums and count;
//  2. two Allreduces (Sum) add the sums and the counts up over all ranks,
//     so every rank gets the same totals and computes the same new
//     centroids (sum / count; a cluster that lost every point keeps its
//     centroid), with no rank acting as a root;
//  3. a third Allreduce adds up how many points changed cluster: once
//     none did, the centroids are final on every rank at once.
//
// The coordinates are integers, so the sums are exact whatever order the
// ranks add them in. Rank 0 runs the same iterations sequentially and
// compares: the centroids, counts and iteration count must agree exactly,
// and the program exits non-zero if they do not.
//
// Run it with
//
//	go run ./examples/kmeans -n 4 -points 20000 -k 5
//
// or as a job of separate processes under meshrun.
package main

import (
	"flag"
	"fmt"
	"os"
	"slices"

	"github.com/meshmpi/meshmpi"
)

func main() {
	n := flag.Int("n", 4, "number of in-process ranks (a rank launched by meshrun joins its job instead)")
	points := flag.Int("points", 20000, "number of points")
	k := flag.Int("k", 5, "number of clusters")
	maxIters := flag.Int("iters", 100, "stop after this many iterations at most")
	flag.Parse()
	if *k < 1 || *points < *k || *maxIters < 1 {
		fmt.Fprintln(os.Stderr, "kmeans: -k and -iters must be positive, and -points at least -k")
		os.Exit(2)
	}
	err := meshmpi.Main(*n, func(world *meshmpi.Comm) error {
		res, err := cluster(world, *points, *k, *maxIters)
		if err != nil || world.Rank() != 0 {
			return err
		}
		return check(world.Size(), *points, *k, *maxIters, res)
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "kmeans:", err)
		os.Exit(1)
	}
}

// mix is SplitMix64's mixer: a hash of x.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// point returns point i of k clusters: near centre i%k (centres lie in
// [0, 10000)², points within 1500 of theirs in each coordinate).
func point(i, k int) [2]int64 {
	c := uint64(i % k)
	h := mix(uint64(i) + 1<<32)
	return [2]int64{
		int64(mix(2*c)%10000) + int64(h%3001) - 1500,
		int64(mix(2*c+1)%10000) + int64((h>>32)%3001) - 1500,
	}
}

// split returns the first index and the length of block r of p for n
// points: the first n%p blocks are one longer.
func split(n, p, r int) (first, length int) {
	length = n / p
	first = r*length + min(r, n%p)
	if r < n%p {
		length++
	}
	return first, length
}

// nearest returns the index of the centroid nearest to pt (the first of
// equals). The float64 conversions round each product on its own: without
// them a compiler may fuse a multiply and an add (arm64 does), and ranks
// on different machines could disagree on a point near two centroids.
func nearest(pt [2]int64, centroids [][2]float64) int {
	best, bestD := 0, 0.0
	for c, cen := range centroids {
		dx, dy := float64(pt[0])-cen[0], float64(pt[1])-cen[1]
		d := float64(dx*dx) + float64(dy*dy)
		if c == 0 || d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// assign assigns each point to its nearest centroid, adds it to its
// cluster's sums and counts (which it zeroes first), and returns how many
// points changed cluster.
func assign(pts [][2]int64, centroids [][2]float64, labels []int, sums, counts []int64) int64 {
	clear(sums)
	clear(counts)
	changed := int64(0)
	for i, pt := range pts {
		c := nearest(pt, centroids)
		if c != labels[i] {
			labels[i] = c
			changed++
		}
		sums[2*c] += pt[0]
		sums[2*c+1] += pt[1]
		counts[c]++
	}
	return changed
}

// move puts each centroid at the mean of its cluster; an empty cluster
// keeps its centroid.
func move(centroids [][2]float64, sums, counts []int64) {
	for c := range centroids {
		if counts[c] > 0 {
			centroids[c] = [2]float64{float64(sums[2*c]) / float64(counts[c]), float64(sums[2*c+1]) / float64(counts[c])}
		}
	}
}

// result is the clustering every rank ends with.
type result struct {
	centroids [][2]float64
	counts    []int64 // points in each cluster
	iters     int
}

// start returns the starting centroids, the first k points.
func start(k int) [][2]float64 {
	centroids := make([][2]float64, k)
	for c := range centroids {
		pt := point(c, k)
		centroids[c] = [2]float64{float64(pt[0]), float64(pt[1])}
	}
	return centroids
}

// cluster is what every rank runs.
func cluster(world *meshmpi.Comm, n, k, maxIters int) (*result, error) {
	first, length := split(n, world.Size(), world.Rank())
	pts := make([][2]int64, length)
	labels := make([]int, length)
	for i := range pts {
		pts[i] = point(first+i, k)
		labels[i] = -1 // in no cluster yet
	}
	centroids := start(k)
	sums, counts := make([]int64, 2*k), make([]int64, k)
	totalSums, totalCounts := make([]int64, 2*k), make([]int64, k)
	iters := 0
	for iters < maxIters {
		changed := []int64{assign(pts, centroids, labels, sums, counts)}
		if err := meshmpi.Allreduce(world, sums, totalSums, meshmpi.Sum); err != nil {
			return nil, err
		}
		if err := meshmpi.Allreduce(world, counts, totalCounts, meshmpi.Sum); err != nil {
			return nil, err
		}
		if err := meshmpi.Allreduce(world, meshmpi.InPlace[int64](), changed, meshmpi.Sum); err != nil {
			return nil, err
		}
		iters++
		if changed[0] == 0 {
			break // the same clusters as last time: the centroids stay
		}
		move(centroids, totalSums, totalCounts)
	}
	return &result{centroids: centroids, counts: totalCounts, iters: iters}, nil
}

// sequential is the same clustering on one rank.
func sequential(n, k, maxIters int) *result {
	pts := make([][2]int64, n)
	labels := make([]int, n)
	for i := range pts {
		pts[i] = point(i, k)
		labels[i] = -1
	}
	centroids := start(k)
	sums, counts := make([]int64, 2*k), make([]int64, k)
	iters := 0
	for iters < maxIters {
		changed := assign(pts, centroids, labels, sums, counts)
		iters++
		if changed == 0 {
			break
		}
		move(centroids, sums, counts)
	}
	return &result{centroids: centroids, counts: counts, iters: iters}
}

// check compares the result with the sequential one and prints it.
func check(ranks, n, k, maxIters int, res *result) error {
	want := sequential(n, k, maxIters)
	fmt.Printf("%d points, %d clusters, on %d ranks: %d iterations\n", n, k, ranks, res.iters)
	for c, cen := range res.centroids {
		fmt.Printf("cluster %d: %6d points around (%.1f, %.1f)\n", c, res.counts[c], cen[0], cen[1])
	}
	if res.iters != want.iters || !slices.Equal(res.centroids, want.centroids) || !slices.Equal(res.counts, want.counts) {
		return fmt.Errorf("the clustering differs from the sequential one (%d iterations, %v, %v)", want.iters, want.centroids, want.counts)
	}
	fmt.Println("ok")
	return nil
}
