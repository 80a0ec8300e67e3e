// Package jsglue holds the syscall/js helpers the browser builds of peer
// and signaling share, so that neither imports the other for them. It has
// code only under GOOS=js; elsewhere it is empty.
package jsglue
