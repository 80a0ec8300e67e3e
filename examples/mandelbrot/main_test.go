package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/meshmpi/meshmpi"
	"github.com/stretchr/testify/require"
)

// reference computes the image pixel by pixel, with complex128.
func reference(img image) []int32 {
	out := make([]int32, 0, img.width*img.height)
	for y := range img.height {
		for x := range img.width {
			c := complex(xMin+(float64(x)+0.5)*(xMax-xMin)/float64(img.width),
				yMax-(float64(y)+0.5)*(yMax-yMin)/float64(img.height))
			z, k := complex128(0), 0
			for ; k < img.maxIter && real(z)*real(z)+imag(z)*imag(z) <= 4; k++ {
				z = z*z + c
			}
			out = append(out, int32(k))
		}
	}
	return out
}

func TestWorkQueue(t *testing.T) {
	for _, tc := range []struct {
		ranks int
		img   image
	}{
		{1, image{40, 20, 200}},
		{2, image{40, 20, 200}},
		{3, image{33, 17, 300}},
		{4, image{64, 3, 100}}, // fewer rows than workers ask for at first
		{7, image{50, 31, 500}},
		{7, image{10, 1, 50}}, // one row
	} {
		t.Run(fmt.Sprintf("%d_ranks_%dx%d", tc.ranks, tc.img.width, tc.img.height), func(t *testing.T) {
			var got []int32
			var byRank []int
			err := meshmpi.Run(tc.ranks, func(world *meshmpi.Comm) error {
				if world.Rank() != manager {
					return work(world, tc.img)
				}
				var err error
				got, byRank, err = manage(world, tc.img)
				return err
			}, meshmpi.WithTimeout(time.Minute))
			require.NoError(t, err)
			require.Equal(t, reference(tc.img), got)
			rows := 0
			for _, k := range byRank {
				rows += k
			}
			require.Equal(t, tc.img.height, rows, "rows by rank %v", byRank)
			if tc.ranks > 1 {
				require.Zero(t, byRank[manager], "the manager computes no row when it has workers")
			}
		})
	}
}

// check, which decides the exit status, fails on a wrong answer.
func TestCheckFails(t *testing.T) {
	img := image{20, 10, 100}
	counts := reference(img)
	require.NoError(t, check(img, counts, []int{10}))
	counts[17]++
	require.Error(t, check(img, counts, []int{10}))
}
