package git

import (
	"math"
	"sync"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// contentCache keeps the content of small pack objects, least recently used
// first out, within a byte bound: delta chains re-read their bases, and
// keeping the small ones spares re-inflating each chain from its root. The
// bound counts what each kept object costs beyond its bytes, so a pack of
// a million empty objects fills it as surely as a few large ones. The lock
// keeps it safe for any reader of the index.
type contentCache struct {
	mu        sync.Mutex
	max, used int
	lru       *simplelru.LRU[int32, []byte] // by index into packIndex.objects; bounded by bytes, not count
}

// cacheItemOverhead is what one kept object costs besides its content: its
// list entry and map entry, rounded up.
const cacheItemOverhead = 128

func newContentCache(max int) *contentCache {
	c := &contentCache{max: max}
	c.lru, _ = simplelru.NewLRU(math.MaxInt, func(_ int32, data []byte) { c.used -= len(data) + cacheItemOverhead })
	return c
}

func (c *contentCache) get(object int32) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Get(object)
}

func (c *contentCache) put(object int32, data []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cost := len(data) + cacheItemOverhead
	if _, ok := c.lru.Get(object); ok || cost > c.max {
		return // already kept (now the most recent), or larger than the bound
	}
	c.lru.Add(object, data)
	c.used += cost
	for c.used > c.max {
		c.lru.RemoveOldest()
	}
}
