// Package ids makes and checks the identifiers of records: UUID version 7
// for anything listed by time (payments, ledger entries), so that their text
// sorts by creation, and the one test of "is this a UUID" that every path
// parameter goes through.
package ids

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
)

var clock struct {
	sync.Mutex
	ms  int64
	seq uint16
}

// NewV7 returns a UUID version 7 whose timestamp is at's millisecond. A
// record keyed by it sorts by time; its created_at must be the same at. Ids
// made by one process in the same millisecond are increasing.
func NewV7(at time.Time) string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("ids: random: " + err.Error())
	}
	ms := at.UnixMilli()
	clock.Lock()
	if ms == clock.ms && clock.seq < 0x0fff {
		clock.seq++
	} else {
		clock.ms = ms
		clock.seq = binary.BigEndian.Uint16(b[6:8]) & 0x07ff
	}
	seq := clock.seq
	clock.Unlock()
	var ts [8]byte
	binary.BigEndian.PutUint64(ts[:], uint64(ms))
	copy(b[0:6], ts[2:8])
	b[6] = 0x70 | byte(seq>>8)&0x0f
	b[7] = byte(seq)
	b[8] = b[8]&0x3f | 0x80
	return uuid.UUID(b).String()
}

// V7Prefix returns the first 13 characters of the text of a UUID v7 made at
// unix millisecond ms ("0190a1b2-c3d4"): every id of that millisecond sorts
// after it, every id of an earlier one before it.
func V7Prefix(ms int64) string {
	h := fmt.Sprintf("%012x", uint64(ms)&(1<<48-1))
	return h[:8] + "-" + h[8:]
}

// IsUUID reports whether s is a UUID in its canonical 36-character text.
func IsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	_, err := uuid.Parse(s)
	return err == nil
}
