// Package measure holds the one rule of the local measuring tools (make
// coldstart, make loadtest) for reading a distribution of durations.
package measure

import "time"

// Percentile returns the p-th percentile (0 < p <= 100) of sorted, by the
// nearest-rank method: the smallest value that at least p % of the values
// do not exceed. It returns 0 for no values.
func Percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(p / 100 * float64(len(sorted)))
	if float64(rank) < p/100*float64(len(sorted)) {
		rank++ // ceil
	}
	rank = max(rank, 1)
	return sorted[min(rank, len(sorted))-1]
}
