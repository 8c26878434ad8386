package makewatch

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// signalMasks reads the signal handling and state of process pid from
// /proc/<pid>/status.
func signalMasks(pid int) (masks, error) {
	var m masks
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return m, err
	}
	found := 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ":")
		v = strings.TrimSpace(v)
		switch k {
		case "State":
			m.zombie = strings.HasPrefix(v, "Z") || strings.HasPrefix(v, "X")
		case "SigCgt", "SigIgn":
			n, err := strconv.ParseUint(v, 16, 64)
			if err != nil {
				return m, fmt.Errorf("/proc/%d/status: %s: %w", pid, k, err)
			}
			if k == "SigCgt" {
				m.caught = n
			} else {
				m.ignored = n
			}
			found++
		}
	}
	if found != 2 {
		return m, fmt.Errorf("/proc/%d/status has no SigCgt or SigIgn", pid)
	}
	return m, nil
}
