package base

import (
	"time"

	"payments/pkg/auth"
	"payments/pkg/cache"
	"payments/pkg/fees"
)

// Caches are a function's caches of what it reads from the table and then
// trusts for cache.Staleness: the companies its token guard reads
// (auth.CompanyCache) and the fee schedules it prices with. They are
// dependencies like the others: a function's New builds its own
// (NewCaches), which live as long as the Lambda instance, so a change made
// through the console, in another instance, takes effect within
// cache.Staleness; what builds every function in one process through
// pkg/app (the local dev server, a test) gives them all one, for as long as
// it runs, which the console's companies and fees services forget what
// they change from
// (companies.Forgetting, fees.Forgetting), so that there a rotation, a
// deactivation or a new fee schedule takes effect at once.
type Caches struct {
	Companies *auth.CompanyCache
	Fees      *cache.Cache[fees.Schedule]
}

// NewCaches returns empty caches whose entries live for cache.Staleness as
// measured by now.
func NewCaches(now func() time.Time) Caches {
	return Caches{
		Companies: auth.NewCompanyCache(auth.CompanyCacheTTL, now),
		Fees:      cache.New[fees.Schedule](cache.Staleness, now),
	}
}
