//go:build !js

package op

// unrolledLoops says whether Sum, Prod, Max and Min take unroll elements a
// loop trip (kernels.go): everywhere but in a browser build.
const unrolledLoops = true
