//go:build !js

package meshmpi

// retryNotFormed: a late rank that comes before its job formed waits
// inside Join, trying again (dialJob).
const retryNotFormed = true
