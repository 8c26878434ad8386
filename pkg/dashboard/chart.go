package dashboard

import (
	"context"
	"sync"
	"time"

	"payments/pkg/page"
	"payments/pkg/payments"
)

// ChartDays is how many days, today included, Home's chart shows.
const ChartDays = 30

// The chart's drawing, in SVG user units.
const (
	chartWidth  = 600
	chartHeight = 160
	chartBottom = 140 // the baseline; labels below it
)

// chart is Home's chart of payouts and collections per day: the counts
// of each (the payments accepted that day, whatever their status), drawn
// as bars, and the same numbers as a table for who cannot see it.
type chart struct {
	Days                  []chartDay
	Max                   int
	Payouts, Collections  int
	Width, Height, Bottom int
	First, Last           string
}

// chartDay is one day of the chart and its two bars.
type chartDay struct {
	Date                 string
	Payouts, Collections int
	// The bars' x, y and height; each bar is barWidth wide.
	PayoutX, CollectionX, PayoutY, CollectionY, PayoutH, CollectionH int
}

// barWidth is a bar's width: two bars and a gap a day.
const barWidth = chartWidth/ChartDays/2 - 1

// newChart counts each day's payouts and collections, the last ChartDays
// days to today (UTC), from the payments' own list: its total for each
// day and type (one count each, read together).
func (h *Handler) newChart(ctx context.Context, companyID string, now time.Time) (chart, error) {
	today := now.UTC().Truncate(24 * time.Hour)
	c := chart{Width: chartWidth, Height: chartHeight, Bottom: chartBottom, Days: make([]chartDay, ChartDays)}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	limit := make(chan struct{}, 8)
	for i := range ChartDays {
		day := today.AddDate(0, 0, i-ChartDays+1)
		c.Days[i].Date = day.Format(time.DateOnly)
		for _, typ := range payments.Types {
			wg.Go(func() {
				limit <- struct{}{}
				defer func() { <-limit }()
				res, err := h.deps.Payouts.List(ctx, companyID, payments.Query{Type: typ, From: day, To: day.AddDate(0, 0, 1)}, page.Request{Page: 1, Limit: 1})
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					first = err
					return
				}
				if typ == payments.TypePayout {
					c.Days[i].Payouts = res.Total
				} else {
					c.Days[i].Collections = res.Total
				}
			})
		}
	}
	wg.Wait()
	if first != nil {
		return chart{}, first
	}
	c.First, c.Last = c.Days[0].Date, c.Days[ChartDays-1].Date
	for _, d := range c.Days {
		c.Max = max(c.Max, d.Payouts, d.Collections)
		c.Payouts += d.Payouts
		c.Collections += d.Collections
	}
	scale := func(n int) int {
		if c.Max == 0 {
			return 0
		}
		return n * (chartBottom - 10) / c.Max
	}
	for i := range c.Days {
		d := &c.Days[i]
		d.PayoutX = i * chartWidth / ChartDays
		d.CollectionX = d.PayoutX + barWidth
		d.PayoutH, d.CollectionH = scale(d.Payouts), scale(d.Collections)
		d.PayoutY, d.CollectionY = chartBottom-d.PayoutH, chartBottom-d.CollectionH
	}
	return c, nil
}
