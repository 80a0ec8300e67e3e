package object

import "errors"

// ErrDecode: a received message is not a value of the type the receiver
// asked for (another layout, a malformed encoding, or not an object
// message at all).
var ErrDecode = errors.New("object: cannot decode the message as the requested type")
