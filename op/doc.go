// Package op is the leaf of meshmpi: element types and reduction operations.
//
// Both the collective engine (coll) and the point-to-point layer (peer,
// for the accumulating receive) reduce byte buffers that hold elements of a
// Go numeric type. They meet here, below both, so neither imports the other
// (DESIGN.md, "Layout and dependency direction"). op imports only the
// standard library.
//
// A Type names an element type on the wire. Buffers travel as []byte views of
// typed Go slices (Bytes), in the machine's byte order: every meshmpi target
// (amd64, arm64, wasm) is little-endian.
package op
