// Package timestamp is the one rule for the timestamps this service stores
// and shows: UTC, millisecond precision, written RFC 3339 with exactly three
// decimals ("2026-11-23T16:11:18.120Z"), so that stored values sort as text.
package timestamp

import "time"

// Layout is how timestamps are written.
const Layout = "2006-01-02T15:04:05.000Z"

// Format writes t in UTC with Layout.
func Format(t time.Time) string { return t.UTC().Format(Layout) }

// Parse reads a timestamp written by Format (any RFC 3339 text is accepted).
func Parse(s string) (time.Time, error) { return time.Parse(time.RFC3339Nano, s) }

// Of returns t in UTC truncated to the millisecond: the instant as it will
// read back after Format and Parse. Services call it on their clock, so that
// what they hold equals what they stored.
func Of(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }
