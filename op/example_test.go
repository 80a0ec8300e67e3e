package op_test

import (
	"fmt"

	"github.com/meshmpi/meshmpi/op"
)

func ExampleReduceSlices() {
	in := []float64{1, 2, 3}
	inout := []float64{10, 20, 30}
	if err := op.ReduceSlices(op.Sum, in, inout); err != nil {
		panic(err)
	}
	fmt.Println(inout)
	// Output: [11 22 33]
}

func ExampleOp_Reduce() {
	// Byte buffers as a link delivers them, with the element type on the side.
	in := op.Bytes([]int32{0b1100, 7})
	inout := op.Bytes([]int32{0b1010, 1})
	if err := op.Band.Reduce(op.Int32, in, inout); err != nil {
		panic(err)
	}
	fmt.Println(op.View[int32](inout))
	fmt.Println(op.Band.Reduce(op.Float64, make([]byte, 8), make([]byte, 8)))
	// Output:
	// [8 1]
	// op: Band on float64: element type invalid or not defined for the operation
}

func ExampleNew() {
	// Non-commutative: in is the left operand, the lower rank's data.
	concat := op.New("concat", false, func(in, inout []int64) {
		for i := range in {
			inout[i] = in[i]*10 + inout[i]
		}
	})
	inout := []int64{2}
	if err := op.ReduceSlices(concat, []int64{1}, inout); err != nil {
		panic(err)
	}
	fmt.Println(inout, concat.Commutative())
	// Output: [12] false
}

func ExampleLoc() {
	// Each rank contributes (value, rank); MaxLoc finds the maximum and the
	// lowest rank that holds it.
	fromRank1 := []op.Loc[float64]{{Value: 9.5, Index: 1}}
	atRank3 := []op.Loc[float64]{{Value: 9.5, Index: 3}}
	if err := op.MaxLoc.Reduce(op.LocTypeOf[float64](), op.LocBytes(fromRank1), op.LocBytes(atRank3)); err != nil {
		panic(err)
	}
	fmt.Printf("%+v\n", atRank3[0])
	// Output: {Value:9.5 Index:1}
}
