//go:build js

package jsglue

import "syscall/js"

// Try runs fn and turns a JavaScript exception (a js.Error panic) into
// an error; any other panic goes on.
func Try(fn func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(js.Error); ok {
				err = e
				return
			}
			panic(r)
		}
	}()
	fn()
	return nil
}
