// Package cache keeps what a function has read from the table in its
// memory for a bounded time: the one rule of how stale such a read may be.
//
// A function instance (a Lambda execution environment) reads a company, or
// a company's fee schedule, once and then trusts it for Staleness. A change
// made through the operator console reaches the instances that serve
// requests within Staleness; in a process that also serves the console (the
// local dev server, the tests) the console's Forget makes it immediate.
package cache

import (
	"context"
	"sync"
	"time"
)

// Staleness is how long a function trusts a company or a fee schedule it
// has read: a change made elsewhere takes effect within this time. It
// bounds how long a token minted before its client_key was rotated keeps
// working (docs/auth.md), so it is short: a read of each every 5 seconds
// per instance costs little, where reading the company at every request
// would add a DynamoDB call to each.
const Staleness = 5 * time.Second

// MaxEntries bounds a cache; past it, expired entries are dropped, and if
// none were, all of them.
const MaxEntries = 10000

// Cache keeps values by key for a bounded time. It is safe for concurrent
// use.
type Cache[V any] struct {
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	entries map[string]entry[V]
	gen     uint64 // counts Forget calls
}

type entry[V any] struct {
	value V
	at    time.Time // when its read began, on the wall clock
}

// New returns an empty cache whose entries live for ttl as measured by now;
// a ttl of 0 keeps them until they are forgotten or the cache is full (for
// values that never change once written).
func New[V any](ttl time.Duration, now func() time.Time) *Cache[V] {
	return &Cache[V]{ttl: ttl, now: now, entries: map[string]entry[V]{}}
}

// wallNow is now without its monotonic reading. Lambda freezes an
// execution environment between invocations, and the monotonic clock is not
// known to advance while it is frozen: ages are measured on the wall clock,
// so an entry read before a long freeze is stale after it.
func (c *Cache[V]) wallNow() time.Time { return c.now().Round(0) }

// Get returns the value of key if its read began less than ttl ago.
func (c *Cache[V]) Get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok {
		var zero V
		return zero, false
	}
	if c.ttl > 0 && c.wallNow().Sub(e.at) >= c.ttl {
		delete(c.entries, key)
		var zero V
		return zero, false
	}
	return e.value, true
}

// Read returns key's value from the cache or, when it has none, from load,
// and keeps what load returned, aged from when load began (a slow read
// does not extend its value's life). A value read while the key was
// forgotten (a change raced with the read) is returned but not kept.
func (c *Cache[V]) Read(ctx context.Context, key string, load func(context.Context) (V, error)) (V, error) {
	if v, ok := c.Get(key); ok {
		return v, nil
	}
	gen, began := c.generation(), c.wallNow()
	v, err := load(ctx)
	if err != nil {
		return v, err
	}
	c.put(key, v, gen, began)
	return v, nil
}

// generation returns the number of Forget calls so far.
func (c *Cache[V]) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// put stores v, read at began, unless Forget was called since generation
// gen was read: a read that raced with a change must not bring the old
// value back.
func (c *Cache[V]) put(key string, v V, gen uint64, began time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return
	}
	now := c.wallNow()
	if len(c.entries) >= MaxEntries {
		for k, e := range c.entries {
			if c.ttl > 0 && now.Sub(e.at) >= c.ttl {
				delete(c.entries, k)
			}
		}
		if len(c.entries) >= MaxEntries {
			clear(c.entries)
		}
	}
	c.entries[key] = entry[V]{value: v, at: began}
}

// Forget drops key, so the next read goes to the store.
func (c *Cache[V]) Forget(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, key)
	c.gen++
}
