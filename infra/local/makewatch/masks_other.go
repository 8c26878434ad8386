//go:build !linux

package makewatch

// signalMasks is errUnsupported: outside Linux, Watch sees only make's
// exit.
func signalMasks(int) (masks, error) { return masks{}, errUnsupported }
