package git

import (
	"container/list"
	"sync"
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
	order     *list.List
	items     map[int32]*list.Element
}

type cacheItem struct {
	object int32 // index into packIndex.objects
	data   []byte
}

// cacheItemOverhead is what one kept object costs besides its content: its
// list element, item and map entry, rounded up.
const cacheItemOverhead = 128

func newContentCache(max int) *contentCache {
	return &contentCache{max: max, order: list.New(), items: map[int32]*list.Element{}}
}

func (c *contentCache) get(object int32) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[object]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*cacheItem).data, true
}

func (c *contentCache) put(object int32, data []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cost := len(data) + cacheItemOverhead
	if cost > c.max {
		return
	}
	if e, ok := c.items[object]; ok {
		c.order.MoveToFront(e)
		return
	}
	c.items[object] = c.order.PushFront(&cacheItem{object, data})
	c.used += cost
	for c.used > c.max {
		last := c.order.Back()
		it := last.Value.(*cacheItem)
		c.order.Remove(last)
		delete(c.items, it.object)
		c.used -= len(it.data) + cacheItemOverhead
	}
}
