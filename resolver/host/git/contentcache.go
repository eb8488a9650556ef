package git

import (
	"container/list"
	"sync"
)

// contentCache keeps the content of small pack objects, least recently used
// first out, within a byte bound: delta chains re-read their bases, and
// keeping the small ones spares re-inflating each chain from its root. The
// lock keeps it safe for any reader of the index.
type contentCache struct {
	mu        sync.Mutex
	max, used int
	order     *list.List
	items     map[int64]*list.Element
}

type cacheItem struct {
	offset int64
	data   []byte
}

func newContentCache(max int) *contentCache {
	return &contentCache{max: max, order: list.New(), items: map[int64]*list.Element{}}
}

func (c *contentCache) get(offset int64) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[offset]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*cacheItem).data, true
}

func (c *contentCache) put(offset int64, data []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(data) > c.max {
		return
	}
	if e, ok := c.items[offset]; ok {
		c.order.MoveToFront(e)
		return
	}
	c.items[offset] = c.order.PushFront(&cacheItem{offset, data})
	c.used += len(data)
	for c.used > c.max {
		last := c.order.Back()
		it := last.Value.(*cacheItem)
		c.order.Remove(last)
		delete(c.items, it.offset)
		c.used -= len(it.data)
	}
}
