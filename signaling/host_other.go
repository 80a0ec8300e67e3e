//go:build !linux

package signaling

// LocalHost is this process's host identity (Join.Host). Outside Linux
// there is no boot id to derive it from, and a browser tab shares no
// memory with anyone: "", so its ranks link over WebRTC.
func LocalHost() string { return "" }
