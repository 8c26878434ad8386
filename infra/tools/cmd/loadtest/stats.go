package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"payments/infra/tools/measure"
)

// Result is what one scenario measured.
type Result struct {
	// Name names the scenario ("(a) dev server, 100 wallets").
	Name string
	// Elapsed is how long the clients ran.
	Elapsed time.Duration
	// Accepted counts the payouts accepted (HTTP 200, or CreatePayout
	// without error), or the authorizations approved (an APPROVED answer,
	// or Cards.Record without error); Latencies holds the latency of each.
	Accepted  int
	Latencies []time.Duration
	// Refused counts the other answers by kind: "409", "400
	// INSUFFICIENT_BALANCE", "conflict", "DECLINED insufficient_funds",
	// "card refused", "error: …".
	Refused map[string]int
	// Attempts and Conflicts count TransactWriteItems calls and the
	// simulated TransactionConflict cancellations among them, when the
	// scenario injects conflicts.
	Attempts, Conflicts int64
}

// Add adds what o measured to r.
func (r *Result) Add(o Result) {
	r.Elapsed += o.Elapsed
	r.Accepted += o.Accepted
	r.Latencies = append(r.Latencies, o.Latencies...)
	if r.Refused == nil {
		r.Refused = map[string]int{}
	}
	for k, n := range o.Refused {
		r.Refused[k] += n
	}
	r.Attempts += o.Attempts
	r.Conflicts += o.Conflicts
}

// PerSecond returns the accepted payouts (approvals) per second.
func (r Result) PerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Accepted) / r.Elapsed.Seconds()
}

// Percentile returns the p-th percentile of r's latencies.
func (r Result) Percentile(p float64) time.Duration {
	sorted := slices.Clone(r.Latencies)
	slices.Sort(sorted)
	return measure.Percentile(sorted, p)
}

// refusedText lists r's refusals, most frequent first, or "-".
func (r Result) refusedText() string {
	if len(r.Refused) == 0 {
		return "-"
	}
	kinds := make([]string, 0, len(r.Refused))
	for k := range r.Refused {
		kinds = append(kinds, k)
	}
	slices.SortFunc(kinds, func(a, b string) int {
		if r.Refused[a] != r.Refused[b] {
			return r.Refused[b] - r.Refused[a]
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%d %s", r.Refused[k], k)
	}
	return strings.Join(parts, ", ")
}

// ms formats d in milliseconds with one decimal.
func ms(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}

// Ratio returns a's accepted rate over b's, 0 when b accepted nothing.
func Ratio(a, b Result) float64 {
	if b.PerSecond() == 0 {
		return 0
	}
	return a.PerSecond() / b.PerSecond()
}

// writeTable prints the throughput table: one row per result, as Markdown.
func writeTable(w io.Writer, rs []Result) {
	fmt.Fprintln(w, "| scenario | accepted | accepted/s | p50 | p99 | not accepted |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---|")
	for _, r := range rs {
		fmt.Fprintf(w, "| %s | %d | %.0f | %s | %s | %s |\n", r.Name, r.Accepted, r.PerSecond(),
			ms(r.Percentile(50)), ms(r.Percentile(99)), r.refusedText())
	}
}

// writeConflictTable prints the conflict-injection results as Markdown.
func writeConflictTable(w io.Writer, rs []Result) {
	fmt.Fprintln(w, "| design | accepted/s | p50 | p99 | TransactWriteItems | simulated conflicts | conflicts per attempt | payouts given up (409) |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rs {
		rate := 0.0
		if r.Attempts > 0 {
			rate = 100 * float64(r.Conflicts) / float64(r.Attempts)
		}
		gaveUp := r.Refused["conflict"]
		share := 0.0
		if r.Accepted+gaveUp > 0 {
			share = 100 * float64(gaveUp) / float64(r.Accepted+gaveUp)
		}
		fmt.Fprintf(w, "| %s | %.0f | %s | %s | %d | %d | %.1f %% | %d (%.1f %%) |\n", r.Name, r.PerSecond(),
			ms(r.Percentile(50)), ms(r.Percentile(99)), r.Attempts, r.Conflicts, rate, gaveUp, share)
	}
}
