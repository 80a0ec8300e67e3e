//go:build !goexperiment.simd || !amd64

package op

// defineVector has no vector loops to add: the build is not amd64 with
// GOEXPERIMENT=simd (kernels_simd_amd64.go), so every op keeps the
// portable loops of kernels.go.
func defineVector() {}
