package object

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math"
	"reflect"
	"strconv"
	"sync"
	"unsafe"

	"github.com/fxamacker/cbor/v2"
)

// headerLen is the length of an object message's header (doc.go).
const headerLen = 16

// maxPayload bounds a value's encoding: the byte collectives count in
// ints, and a message this large is a mistake in a teaching lab.
const maxPayload = 1 << 31

// Payload formats.
const (
	fmtMemory byte = 1 // the value's memory (a fixed layout)
	fmtCBOR   byte = 2
)

// header describes one encoded value.
type header struct {
	n      int    // payload length
	format byte   // fmtMemory or fmtCBOR
	layout uint32 // fmtMemory: the layout hash
}

func (h header) put(b []byte) {
	binary.LittleEndian.PutUint64(b[0:8], uint64(h.n))
	b[8], b[9], b[10], b[11] = h.format, 0, 0, 0
	binary.LittleEndian.PutUint32(b[12:16], h.layout)
}

func readHeader(b []byte) (header, error) {
	if len(b) < headerLen {
		return header{}, fmt.Errorf("%d-byte message is shorter than an object header: %w", len(b), ErrDecode)
	}
	n := binary.LittleEndian.Uint64(b[0:8])
	h := header{format: b[8], layout: binary.LittleEndian.Uint32(b[12:16])}
	if n > maxPayload || (h.format != fmtMemory && h.format != fmtCBOR) || b[9]|b[10]|b[11] != 0 {
		return header{}, fmt.Errorf("not an object message header: %w", ErrDecode)
	}
	h.n = int(n)
	return h, nil
}

// layoutInfo says whether a type travels as memory, and its layout hash.
type layoutInfo struct {
	fixed bool
	hash  uint32
}

var layouts sync.Map // reflect.Type → layoutInfo

// layoutOf returns T's layout info, computed once per type.
func layoutOf[T any]() layoutInfo {
	t := reflect.TypeFor[T]()
	if li, ok := layouts.Load(t); ok {
		return li.(layoutInfo)
	}
	var sig []byte
	fixed := describe(t, &sig)
	li := layoutInfo{fixed: fixed}
	if fixed {
		h := fnv.New32a()
		h.Write(sig)
		li.hash = h.Sum32()
	}
	layouts.Store(t, li)
	return li
}

// describe appends t's layout (kinds, sizes and offsets, not names) to
// sig and reports whether t is fixed-size and pointer-free, made of
// numbers only: any bytes a peer sends are a valid value of such a type
// (a bool is not: a byte other than 0 or 1 is no Go bool, so a type with
// one travels as CBOR, which checks). Two types
// with one description have one memory layout on every meshmpi target.
func describe(t reflect.Type, sig *[]byte) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		*sig = append(*sig, byte(t.Kind()))
		return true
	case reflect.Array:
		*sig = append(*sig, '[')
		*sig = strconv.AppendInt(*sig, int64(t.Len()), 10)
		*sig = append(*sig, ']')
		return describe(t.Elem(), sig)
	case reflect.Struct:
		*sig = append(*sig, '{')
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				return false // CBOR would drop it; memory would send it
			}
			*sig = strconv.AppendInt(*sig, int64(f.Offset), 10)
			*sig = append(*sig, ':')
			if !describe(f.Type, sig) {
				return false
			}
			*sig = append(*sig, ';')
		}
		*sig = append(*sig, '}')
		*sig = strconv.AppendInt(*sig, int64(t.Size()), 10)
		return true
	}
	return false
}

// encode returns v's message: the header, then the payload.
func encode[T any](v T) ([]byte, error) {
	return encodeInto(nil, v)
}

// encodeInto is encode into dst's memory when it is large enough (dst's
// length is ignored; its capacity is what counts), else into a new slice.
func encodeInto[T any](dst []byte, v T) ([]byte, error) {
	if li := layoutOf[T](); li.fixed {
		n := int(unsafe.Sizeof(v))
		b := dst[:0]
		if cap(b) < headerLen+n {
			b = make([]byte, 0, headerLen+n)
		}
		b = b[:headerLen+n]
		header{n: n, format: fmtMemory, layout: li.hash}.put(b)
		copy(b[headerLen:], unsafe.Slice((*byte)(unsafe.Pointer(&v)), n))
		return b, nil
	}
	if cap(dst) < headerLen+256 {
		dst = make([]byte, 0, headerLen+256)
	}
	buf := bytes.NewBuffer(dst[:headerLen]) // the payload goes after the header
	if err := encMode.MarshalToBuffer(v, buf); err != nil {
		return nil, fmt.Errorf("encode %T: %w", v, err)
	}
	b := buf.Bytes()
	n := len(b) - headerLen
	if n > maxPayload {
		return nil, fmt.Errorf("encode %T: %d bytes is over the %d-byte limit of an object", v, n, maxPayload)
	}
	header{n: n, format: fmtCBOR}.put(b)
	return b, nil
}

// decode decodes a payload described by h into a T.
func decode[T any](h header, payload []byte) (T, error) {
	var v T
	if len(payload) != h.n {
		return v, fmt.Errorf("payload of %d bytes, header says %d: %w", len(payload), h.n, ErrDecode)
	}
	switch h.format {
	case fmtMemory:
		li := layoutOf[T]()
		if !li.fixed || li.hash != h.layout || h.n != int(unsafe.Sizeof(v)) {
			return v, fmt.Errorf("a %d-byte fixed-layout value cannot be received as %T: %w", h.n, v, ErrDecode)
		}
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&v)), h.n), payload)
	case fmtCBOR:
		if err := decMode.Unmarshal(payload, &v); err != nil {
			return v, fmt.Errorf("as %T: %w: %w", v, ErrDecode, err)
		}
	}
	return v, nil
}

// decodeMessage decodes a whole message (header and payload).
func decodeMessage[T any](b []byte) (T, error) {
	h, err := readHeader(b)
	if err != nil {
		var zero T
		return zero, err
	}
	return decode[T](h, b[headerLen:])
}

// The CBOR modes. Decoding allows as many array elements and map pairs as
// a message can hold (the defaults stop at 131,072, which a slice of
// results passes); the message's own length bounds what a peer can make
// a rank allocate.
var (
	encMode = must(cbor.EncOptions{}.UserBufferEncMode())
	decMode = must(cbor.DecOptions{MaxArrayElements: math.MaxInt32, MaxMapPairs: math.MaxInt32}.DecMode())
)

func must[M any](m M, err error) M {
	if err != nil {
		panic(err) // fixed options: a failure is a programming error, caught by every test
	}
	return m
}
