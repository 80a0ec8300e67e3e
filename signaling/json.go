package signaling

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// The protocol's JSON codec, one piece of code on every target.
//
// Why not encoding/json: its reflection-driven encoder and decoder add
// about 150 KB to a browser rank's gzipped size (examples/pi: 1.33 MiB
// with it, 1.18 MiB without; issue 5's bar is 1.25 MiB), and the protocol
// has eight small message types. Each type writes its own fields
// (appendData) and reads them (field); this file holds the JSON both share.
//
// The encoder writes what encoding/json wrote for the same structs: fields
// in declaration order, map keys sorted, strings escaped the same way
// (including <, >, & and U+2028/U+2029, and invalid UTF-8 as U+FFFD), so
// the bytes on the wire are unchanged. The decoder reads RFC 8259 JSON and
// is stricter than encoding/json: object keys match exactly (no case
// folding), a key may not repeat, strings must be valid UTF-8. null reads
// as an absent field, as it did.

// maxDepth bounds the nesting of a JSON value (a signal payload), as
// encoding/json does, so a hostile message cannot exhaust the stack.
const maxDepth = 10000

// jsonReader reads one JSON text. Its methods skip leading whitespace; the
// typed readers (str, int, …) leave their target alone on a null.
type jsonReader struct {
	data  []byte
	pos   int
	depth int
	slab  []int // the server's: backing for *int fields of telemetry (intPtr)
}

// syntaxError says what was wrong where; Decode wraps it in ErrMalformed.
func (r *jsonReader) syntaxError(format string, args ...any) error {
	return fmt.Errorf("%s at offset %d", fmt.Sprintf(format, args...), r.pos)
}

func (r *jsonReader) skipSpace() {
	for r.pos < len(r.data) {
		switch r.data[r.pos] {
		case ' ', '\t', '\n', '\r':
			r.pos++
		default:
			return
		}
	}
}

// peek returns the next byte after whitespace, 0 at the end.
func (r *jsonReader) peek() byte {
	r.skipSpace()
	if r.pos == len(r.data) {
		return 0
	}
	return r.data[r.pos]
}

func (r *jsonReader) expect(c byte) error {
	if r.peek() != c {
		return r.syntaxError("want %q", c)
	}
	r.pos++
	return nil
}

// end checks that nothing but whitespace follows the value (not peek,
// whose 0 at the end would let a NUL byte pass as the end).
func (r *jsonReader) end() error {
	if r.skipSpace(); r.pos != len(r.data) {
		return r.syntaxError("trailing data after the JSON value")
	}
	return nil
}

// literal consumes word (true, false, null) if it comes next.
func (r *jsonReader) literal(word string) bool {
	r.skipSpace()
	if len(r.data)-r.pos >= len(word) && string(r.data[r.pos:r.pos+len(word)]) == word {
		r.pos += len(word)
		return true
	}
	return false
}

func (r *jsonReader) null() bool { return r.literal("null") }

// bool reads true or false.
func (r *jsonReader) bool(v *bool) error {
	switch {
	case r.literal("true"):
		*v = true
	case r.literal("false"):
		*v = false
	default:
		return r.syntaxError("want true or false")
	}
	return nil
}

// object reads an object, calling member for each key with the reader at
// the key's value; member must consume the value.
func (r *jsonReader) object(member func(key string) error) error {
	if err := r.expect('{'); err != nil {
		return err
	}
	if r.depth++; r.depth > maxDepth {
		return r.syntaxError("nested deeper than %d", maxDepth)
	}
	defer func() { r.depth-- }()
	if r.peek() == '}' {
		r.pos++
		return nil
	}
	for {
		key, err := r.key()
		if err != nil {
			return err
		}
		if err := r.expect(':'); err != nil {
			return err
		}
		if err := member(key); err != nil {
			return err
		}
		switch r.peek() {
		case ',':
			r.pos++
		case '}':
			r.pos++
			return nil
		default:
			return r.syntaxError("want ',' or '}'")
		}
	}
}

// fields reads an object into a struct: field stores the member key,
// which must name one of the struct's fields, at most once.
func (r *jsonReader) fields(field func(r *jsonReader, key string) (known bool, err error)) error {
	var seen [8]string // no message type has more fields
	n := 0
	return r.object(func(key string) error {
		if slices.Contains(seen[:n], key) {
			return r.syntaxError("repeated field %q", key)
		}
		known, err := field(r, key)
		if !known {
			return r.syntaxError("unknown field %q", key)
		}
		seen[n] = key
		n++
		return err
	})
}

// array reads an array, calling elem with the reader at each element.
func (r *jsonReader) array(elem func() error) error {
	if err := r.expect('['); err != nil {
		return err
	}
	if r.depth++; r.depth > maxDepth {
		return r.syntaxError("nested deeper than %d", maxDepth)
	}
	defer func() { r.depth-- }()
	if r.peek() == ']' {
		r.pos++
		return nil
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		switch r.peek() {
		case ',':
			r.pos++
		case ']':
			r.pos++
			return nil
		default:
			return r.syntaxError("want ',' or ']'")
		}
	}
}

// value reads any JSON value and returns its bytes, checked but not
// decoded.
func (r *jsonReader) value() ([]byte, error) {
	c := r.peek()
	start := r.pos
	var err error
	switch {
	case c == '{':
		err = r.object(func(string) error { _, err := r.value(); return err })
	case c == '[':
		err = r.array(func() error { _, err := r.value(); return err })
	case c == '"':
		_, _, err = r.scanString()
	case c == '-' || c >= '0' && c <= '9':
		_, err = r.number()
	case r.literal("true"), r.literal("false"), r.null():
	default:
		err = r.syntaxError("want a JSON value")
	}
	return r.data[start:r.pos], err
}

// scanString checks the string at the reader and moves past it, returning
// its contents between the quotes and whether they hold escapes.
func (r *jsonReader) scanString() (body []byte, escaped bool, err error) {
	if err := r.expect('"'); err != nil {
		return nil, false, err
	}
	start := r.pos
	for r.pos < len(r.data) {
		c := r.data[r.pos]
		switch {
		case c == '"':
			r.pos++
			return r.data[start : r.pos-1], escaped, nil
		case c == '\\':
			escaped = true
			if r.pos+1 == len(r.data) {
				return nil, false, r.syntaxError("unterminated string")
			}
			switch r.data[r.pos+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				r.pos += 2
			case 'u':
				if _, ok := hex4(r.data[r.pos+2:]); !ok {
					return nil, false, r.syntaxError("bad \\u escape")
				}
				r.pos += 6
			default:
				return nil, false, r.syntaxError("bad escape")
			}
		case c < 0x20:
			return nil, false, r.syntaxError("control character in a string")
		case c < utf8.RuneSelf:
			r.pos++
		default:
			ch, size := utf8.DecodeRune(r.data[r.pos:])
			if ch == utf8.RuneError && size == 1 {
				return nil, false, r.syntaxError("invalid UTF-8 in a string")
			}
			r.pos += size
		}
	}
	return nil, false, r.syntaxError("unterminated string")
}

// hex4 parses the 4 hex digits of a \u escape.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var v rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		v = v<<4 | rune(c)
	}
	return v, true
}

// unescape decodes the body of a string that scanString accepted. A \u
// escape of half a surrogate pair becomes U+FFFD, as in encoding/json.
func unescape(body []byte) string {
	out := make([]byte, 0, len(body))
	for i := 0; i < len(body); {
		c := body[i]
		if c != '\\' {
			out = append(out, c)
			i++
			continue
		}
		c = body[i+1]
		i += 2
		switch c {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			ch, _ := hex4(body[i:])
			i += 4
			if utf16.IsSurrogate(ch) {
				hi := ch
				ch = utf8.RuneError
				if lo, ok := hex4(body[min(i+2, len(body)):]); ok && body[i] == '\\' && body[i+1] == 'u' {
					if pair := utf16.DecodeRune(hi, lo); pair != utf8.RuneError {
						ch = pair
						i += 6
					}
				}
			}
			out = utf8.AppendRune(out, ch)
		default: // '"', '\\', '/'
			out = append(out, c)
		}
	}
	return string(out)
}

// key reads an object's key. The server interns the members of the
// messages (internKey): reading one allocates nothing.
func (r *jsonReader) key() (string, error) {
	body, escaped, err := r.scanString()
	switch {
	case err != nil:
		return "", err
	case escaped:
		return unescape(body), nil
	}
	if k, ok := internKey(body); ok {
		return k, nil
	}
	return string(body), nil
}

// str reads a string into *s.
func (r *jsonReader) str(s *string) error {
	if r.null() {
		return nil
	}
	body, escaped, err := r.scanString()
	switch {
	case err != nil:
		return err
	case escaped:
		*s = unescape(body)
	default:
		*s = string(body)
	}
	return nil
}

// number reads a number literal (RFC 8259 §6), returning its bytes (not
// a string: the callers parse it without allocating).
func (r *jsonReader) number() ([]byte, error) {
	r.skipSpace()
	start := r.pos
	digits := func() bool {
		n := r.pos
		for r.pos < len(r.data) && r.data[r.pos] >= '0' && r.data[r.pos] <= '9' {
			r.pos++
		}
		return r.pos > n
	}
	at := func(c byte) bool {
		if r.pos < len(r.data) && r.data[r.pos] == c {
			r.pos++
			return true
		}
		return false
	}
	at('-')
	ok := true
	if !at('0') {
		ok = digits()
	}
	if ok && at('.') {
		ok = digits()
	}
	if ok && (at('e') || at('E')) {
		_ = at('+') || at('-')
		ok = digits()
	}
	if !ok {
		return nil, r.syntaxError("bad number")
	}
	return r.data[start:r.pos], nil
}

// int reads an integer into *v; fractions, exponents and values out of
// range are errors.
func (r *jsonReader) int(v *int) error {
	if r.null() {
		return nil
	}
	lit, err := r.number()
	if err != nil {
		return err
	}
	n, err := strconv.ParseInt(string(lit), 10, 0)
	if err != nil {
		return r.syntaxError("number %s is not an int", lit)
	}
	*v = int(n)
	return nil
}

// optInt reads an integer into a new **v.
func (r *jsonReader) optInt(v **int) error {
	if r.null() {
		*v = nil
		return nil
	}
	n := new(int)
	if err := r.int(n); err != nil {
		return err
	}
	*v = n
	return nil
}

func (r *jsonReader) uint64(v *uint64) error {
	if r.null() {
		return nil
	}
	lit, err := r.number()
	if err != nil {
		return err
	}
	n, err := strconv.ParseUint(string(lit), 10, 64)
	if err != nil {
		return r.syntaxError("number %s is not a uint64", lit)
	}
	*v = n
	return nil
}

func (r *jsonReader) float64(v *float64) error {
	if r.null() {
		return nil
	}
	lit, err := r.number()
	if err != nil {
		return err
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	if err != nil {
		return r.syntaxError("number %s is not a float64", lit)
	}
	*v = f
	return nil
}

// readStrings reads an array of strings into *v.
func readStrings[S ~string](r *jsonReader, v *[]S) error {
	if r.null() {
		return nil
	}
	*v = []S{} // present, though perhaps empty
	return r.array(func() error {
		var s string
		err := r.str(&s)
		*v = append(*v, S(s))
		return err
	})
}

// readInts reads an array of integers into *v.
func readInts(r *jsonReader, v *[]int) error {
	if r.null() {
		*v = nil
		return nil
	}
	*v = []int{}
	return r.array(func() error {
		var n int
		err := r.int(&n)
		*v = append(*v, n)
		return err
	})
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string, escaped as encoding/json does.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default: // other control characters, and <, >, & for HTML's sake
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		ch, size := utf8.DecodeRuneInString(s[i:])
		if ch == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		// U+2028 and U+2029 end lines in JavaScript source.
		if ch == '\u2028' || ch == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[ch&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendFloat appends f as encoding/json does: no exponent between 1e-6
// and 1e21, and a short one outside.
func appendFloat(b []byte, f float64) []byte {
	format := byte('f')
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 → e-9
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// jsonObject appends an object's members, writing the braces and commas.
type jsonObject struct {
	b    []byte
	more bool
}

func openObject(b []byte) jsonObject { return jsonObject{b: append(b, '{')} }

// key starts member k; its value follows.
func (o *jsonObject) key(k string) {
	if o.more {
		o.b = append(o.b, ',')
	}
	o.more = true
	o.b = append(appendString(o.b, k), ':')
}

func (o *jsonObject) str(k, v string)        { o.key(k); o.b = appendString(o.b, v) }
func (o *jsonObject) int(k string, v int)    { o.key(k); o.b = strconv.AppendInt(o.b, int64(v), 10) }
func (o *jsonObject) raw(k string, v []byte) { o.key(k); o.b = append(o.b, v...) }
func (o *jsonObject) bool(k string, v bool)  { o.key(k); o.b = strconv.AppendBool(o.b, v) }

// appendStrings appends v as an array of strings.
func appendStrings[S ~string](b []byte, v []S) []byte {
	b = append(b, '[')
	for i, s := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, string(s))
	}
	return append(b, ']')
}

// appendInts appends v as an array of integers.
func appendInts(b []byte, v []int) []byte {
	b = append(b, '[')
	for i, n := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(n), 10)
	}
	return append(b, ']')
}

func (o *jsonObject) close() []byte { return append(o.b, '}') }

// EncodeString returns s as a JSON string, for a Signal payload that
// carries text (an SDP).
func EncodeString(s string) []byte { return appendString(nil, s) }

// DecodeString reads a payload that is one JSON string. Its errors wrap
// ErrMalformed.
func DecodeString(payload []byte) (string, error) {
	r := jsonReader{data: payload}
	var s string
	if r.peek() != '"' {
		return "", fmt.Errorf("%w: payload is not a JSON string", ErrMalformed)
	}
	if err := r.str(&s); err != nil {
		return "", fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if err := r.end(); err != nil {
		return "", fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return s, nil
}

// validJSON reports whether b is exactly one JSON value other than null.
func validJSON(b []byte) bool {
	r := jsonReader{data: b}
	if r.null() {
		return false
	}
	_, err := r.value()
	return err == nil && r.end() == nil
}
