package store

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Callers that arrive while a flush runs share the next one: they never
// return on a flush that began before they were called, and they do not
// each get a flush of their own.
func TestSyncGroupCoalescesLateArrivals(t *testing.T) {
	var flushes atomic.Int32
	firstStarted, releaseFirst := make(chan struct{}), make(chan struct{})
	g := newSyncGroup(func(string) error {
		if flushes.Add(1) == 1 {
			close(firstStarted)
			<-releaseFirst
		}
		return nil
	})
	go func() { _ = g.sync("a") }()
	<-firstStarted

	const late = 8
	var wg sync.WaitGroup
	var returnedEarly atomic.Int32
	for range late {
		wg.Go(func() {
			if err := g.sync("b"); err != nil {
				t.Error(err)
			}
			if flushes.Load() < 2 {
				returnedEarly.Add(1)
			}
		})
	}
	// Let the late callers queue behind the running flush (if one is
	// slow to, it gets a flush of its own: allowed, only counted).
	time.Sleep(20 * time.Millisecond)
	close(releaseFirst)
	wg.Wait()
	if n := returnedEarly.Load(); n > 0 {
		t.Errorf("%d callers returned on the flush that began before them", n)
	}
	if n := flushes.Load(); n < 2 || n > 1+late {
		t.Errorf("%d flushes for 1+%d callers", n, late)
	}
	if n := flushes.Load(); n != 2 {
		t.Logf("%d flushes (2 when every late caller queued in time)", n)
	}
}

func TestSyncGroupReportsTheFlushError(t *testing.T) {
	boom := errors.New("boom")
	fail := true
	g := newSyncGroup(func(string) error {
		if fail {
			return boom
		}
		return nil
	})
	if err := g.sync("x"); !errors.Is(err, boom) {
		t.Fatalf("got %v, want %v", err, boom)
	}
	fail = false
	if err := g.sync("x"); err != nil {
		t.Fatalf("a later flush that succeeds: got %v", err)
	}
}
