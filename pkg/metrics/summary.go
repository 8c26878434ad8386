package metrics

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
)

// Row is the summary of one metric of one function, with one set of
// dimension values.
type Row struct {
	Name       string
	Function   string
	Dimensions string // Currency=XAF Operator=MTN_CM, the others than Function
	Unit       Unit
	Values     []float64
}

// Sum returns the total of r's values.
func (r Row) Sum() float64 {
	var s float64
	for _, v := range r.Values {
		s += v
	}
	return s
}

// Percentile returns the value below which p percent of r's values lie
// (nearest rank), 0 without values.
func (r Row) Percentile(p float64) float64 {
	if len(r.Values) == 0 {
		return 0
	}
	v := slices.Sorted(slices.Values(r.Values))
	i := int(math.Ceil(p/100*float64(len(v)))) - 1
	return v[min(max(i, 0), len(v)-1)]
}

// Summarize reads log lines from r and returns a Row for each metric,
// function and set of dimension values of its EMF lines, sorted by name,
// function and dimensions, and the number of EMF lines it could not read.
// Lines that are not EMF are skipped.
func Summarize(r io.Reader) (rows []Row, invalid int, err error) {
	index := map[string]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		samples, err := Parse(sc.Bytes())
		switch {
		case errors.Is(err, ErrNotEMF):
			continue
		case err != nil:
			invalid++
			continue
		}
		for _, s := range samples {
			var dims []string
			for k, v := range s.Dimensions {
				if k != "Function" {
					dims = append(dims, k+"="+v)
				}
			}
			slices.Sort(dims)
			row := Row{Name: s.Name, Function: s.Dimensions["Function"], Dimensions: strings.Join(dims, " "), Unit: s.Unit}
			key := row.Name + "\x00" + row.Function + "\x00" + row.Dimensions
			i, ok := index[key]
			if !ok {
				i = len(rows)
				index[key] = i
				rows = append(rows, row)
			}
			rows[i].Values = append(rows[i].Values, s.Values...)
		}
	}
	slices.SortFunc(rows, func(a, b Row) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Function, b.Function), cmp.Compare(a.Dimensions, b.Dimensions))
	})
	return rows, invalid, sc.Err()
}

// WriteTable writes rows as a table: for counts their total, for gauges
// their last and highest values, for times their number, median, 99th
// percentile and maximum.
func WriteTable(w io.Writer, rows []Row) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "METRIC\tFUNCTION\tDIMENSIONS\tVALUE")
	for _, r := range rows {
		var value string
		switch {
		case r.Unit == UnitMilliseconds:
			value = fmt.Sprintf("n=%d p50=%.1fms p99=%.1fms max=%.1fms", len(r.Values), r.Percentile(50), r.Percentile(99), r.Percentile(100))
		case slices.Contains(Gauges, r.Name):
			value = fmt.Sprintf("last=%g max=%g", r.Values[len(r.Values)-1], r.Percentile(100))
		default:
			value = fmt.Sprintf("%g", r.Sum())
		}
		dims := r.Dimensions
		if dims == "" {
			dims = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Name, r.Function, dims, value)
	}
	return tw.Flush()
}
