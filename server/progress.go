package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"reasonix.io/plugind/internal/lazyregexp"
)

// Live progress of long plans and installs (SPEC §12). The client picks a
// progress id, opens GET /events?progress=ID (server-sent events), and sends
// the same id in ProgressHeader with POST /plugins/plan or
// /plugins/install. Whichever arrives first creates the stream; a
// subscriber that comes late gets the latest state at once, and a finished
// stream is kept for progressKeep so a slow subscriber still sees the end.
// Streams belong to the client that made them (the token holder or one
// browser session): another client cannot read them by guessing an id.
const (
	// ProgressHeader names the progress stream a plan or install reports to.
	ProgressHeader = "X-Reasonix-Progress"

	progressKeep      = time.Minute      // a finished stream stays readable
	progressUnused    = 10 * time.Minute // a stream nothing reports to
	progressHeartbeat = 15 * time.Second // keeps idle proxies and browsers connected
	progressCoalesce  = 100 * time.Millisecond
	// Streams the daemon keeps at once, and of those, streams one client
	// (the token holder, or one browser session) may have: anyone can
	// name a new id, so without the second bound one client could take
	// every stream and leave the others without progress.
	maxProgressStreams   = 256
	maxProgressPerClient = 16
	// Open GET /events answers one client may hold at once: each holds a
	// connection for up to progressUnused, and any number could follow
	// one stream.
	maxFollowersPerClient = 2 * maxProgressPerClient
)

var progressIDPattern = lazyregexp.New(`^[A-Za-z0-9_-]{8,64}$`)

// ProgressEvent is one state of a stream, sent as the data of an SSE event
// ("progress" while work runs, "done" at the end).
type ProgressEvent struct {
	// Phase is planning, resolving, resolved, installing, applying or done.
	Phase   string `json:"phase"`
	Total   int    `json:"total"`   // marketplace entries to resolve (0: one plugin)
	Entries int    `json:"entries"` // entries resolved so far
	Repos   int    `json:"repos"`   // repositories fetched
	Bytes   int64  `json:"bytes"`   // bytes those fetches brought
	// Status is the response's status when Phase is done (planned,
	// applied, refused, failed).
	Status  string `json:"status,omitempty"`
	Elapsed int64  `json:"elapsedMs"`
	Waiting
	// install: after resolving comes applying (not sent).
	install bool
}

// progressStream is one id's progress. The resolver reports to it
// (reporter) from several goroutines.
type progressStream struct {
	mu      sync.Mutex
	state   ProgressEvent
	start   time.Time
	done    bool
	doneAt  time.Time
	changed chan struct{} // closed (and replaced) on every change
	touched time.Time     // last begun or changed: streams idle too long are dropped
}

func newProgressStream(now time.Time) *progressStream {
	return &progressStream{changed: make(chan struct{}), start: now, touched: now, state: ProgressEvent{Phase: "waiting"}}
}

// update changes the state under the lock and wakes subscribers.
func (p *progressStream) update(f func(*ProgressEvent)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return
	}
	f(&p.state)
	p.touched = time.Now()
	p.state.Elapsed = p.touched.Sub(p.start).Milliseconds()
	close(p.changed)
	p.changed = make(chan struct{})
}

// snapshot returns the state, whether it is final, and a channel closed at
// the next change.
func (p *progressStream) snapshot() (ProgressEvent, bool, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state, p.done, p.changed
}

// begin marks the start of a plan or install on this stream (an id used
// again starts over).
func (p *progressStream) begin(install bool) {
	p.mu.Lock()
	p.done = false
	p.start = time.Now()
	p.touched = p.start
	p.mu.Unlock()
	phase := "planning"
	if install {
		phase = "installing"
	}
	p.update(func(e *ProgressEvent) { *e = ProgressEvent{Phase: phase, install: install} })
}

// finish ends the stream with the response's status.
func (p *progressStream) finish(status string) {
	p.update(func(e *ProgressEvent) { e.Phase, e.Status = "done", status })
	p.mu.Lock()
	p.done, p.doneAt = true, time.Now()
	p.mu.Unlock()
}

// progressHub holds the streams by (principal, id).
type progressHub struct {
	mu        sync.Mutex
	streams   map[progressKey]*progressStream
	following map[principal]int // open GET /events answers, by client
}

type progressKey struct {
	who principal
	id  string
}

// get returns who's stream id, making it. A new stream is refused 429 at
// the client's own limit, 503 at the daemon's.
func (h *progressHub) get(who principal, id string) (*progressStream, *refusal) {
	key := progressKey{who, id}
	h.mu.Lock()
	defer h.mu.Unlock()
	now := time.Now()
	if h.streams == nil {
		h.streams = map[progressKey]*progressStream{}
	}
	mine := 0
	var oldestDone progressKey
	var oldestAt time.Time
	for k, p := range h.streams {
		p.mu.Lock()
		done, doneAt, touched := p.done, p.doneAt, p.touched
		p.mu.Unlock()
		if (done && now.Sub(doneAt) > progressKeep) || (!done && now.Sub(touched) > progressUnused) {
			delete(h.streams, k)
			continue
		}
		if k.who != who {
			continue
		}
		mine++
		if done && (oldestAt.IsZero() || doneAt.Before(oldestAt)) {
			oldestDone, oldestAt = k, doneAt
		}
	}
	if p, ok := h.streams[key]; ok {
		return p, nil
	}
	// At a limit, this client's oldest finished stream (kept only for a
	// late reader) makes room before anything is refused.
	if mine >= maxProgressPerClient || len(h.streams) >= maxProgressStreams {
		if oldestAt.IsZero() {
			if mine >= maxProgressPerClient {
				return nil, &refusal{http.StatusTooManyRequests, CodeBusy, fmt.Sprintf("this client already has %d progress streams under way, the most one client may have: wait for one to finish, or send the request without %s", maxProgressPerClient, ProgressHeader)}
			}
			return nil, &refusal{http.StatusServiceUnavailable, CodeBusy, fmt.Sprintf("the daemon already holds %d progress streams, its limit: try again shortly, or send the request without %s", maxProgressStreams, ProgressHeader)}
		}
		delete(h.streams, oldestDone)
	}
	p := newProgressStream(now)
	h.streams[key] = p
	return p, nil
}

// follow counts one more open GET /events answer of who, refusing it (429)
// past maxFollowersPerClient; release ends it.
func (h *progressHub) follow(who principal) (release func(), ref *refusal) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.following == nil {
		h.following = map[principal]int{}
	}
	if h.following[who] >= maxFollowersPerClient {
		return nil, &refusal{http.StatusTooManyRequests, CodeBusy, fmt.Sprintf("this client already follows %d progress streams at once, the most one client may: close one first", maxFollowersPerClient)}
	}
	h.following[who]++
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.following[who]--; h.following[who] <= 0 {
			delete(h.following, who)
		}
	}, nil
}

// progressStream returns who's stream id; ok is false when the request was
// answered (a bad id, a limit).
func (s *Server) progressStream(w http.ResponseWriter, r *http.Request, id string) (*progressStream, bool) {
	if !progressIDPattern.MatchString(id) {
		writeError(w, http.StatusBadRequest, CodeBadRequest, "progress id must be 8 to 64 letters, digits, - or _")
		return nil, false
	}
	p, ref := s.progress.get(principalOf(r), id)
	if ref != nil {
		ref.write(w)
		return nil, false
	}
	return p, true
}

// GET /events?progress=ID: the stream as server-sent events. It ends after
// the "done" event, when the client leaves, or when the daemon stops.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	p, ok := s.progressStream(w, r, r.URL.Query().Get("progress"))
	if !ok {
		return
	}
	release, ref := s.progress.follow(principalOf(r))
	if ref != nil {
		ref.write(w)
		return
	}
	defer release()
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	// Browsers reconnect an EventSource after a drop; a finished stream
	// answers at once, so a long retry costs nothing.
	if _, err := fmt.Fprint(w, "retry: 2000\n\n"); err != nil {
		return
	}
	heartbeat := time.NewTicker(progressHeartbeat)
	defer heartbeat.Stop()
	// A stream nothing finishes is not followed forever; a browser that
	// still wants it reconnects and gets the latest state.
	giveUp := time.NewTimer(progressUnused)
	defer giveUp.Stop()
	sent := -1
	var last ProgressEvent
	for {
		state, done, changed := p.snapshot()
		if sent < 0 || state != last {
			name := "progress"
			if done {
				name = "done"
			}
			// One line: JSON has no raw newlines. Plain numbers and
			// strings: it always encodes.
			data, _ := json.Marshal(state)
			if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, data); err != nil {
				return
			}
			sent++
			last = state
		}
		if err := rc.Flush(); err != nil {
			return
		}
		if done {
			return
		}
		select {
		case <-changed:
			// Let a burst of reports settle into one event.
			select {
			case <-time.After(progressCoalesce):
			case <-r.Context().Done():
				return
			}
		case <-heartbeat.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
		case <-r.Context().Done():
			return
		case <-s.draining:
			return
		case <-giveUp.C:
			return
		}
	}
}

// progressFanout passes one shared plan's progress on to every request
// that joined it (identical plans in flight share one resolution). A
// request that joins late is first given the progress so far.
type progressFanout struct {
	mu      sync.Mutex
	streams []*progressStream
	state   ProgressEvent // the shared plan's progress so far
}

func (f *progressFanout) add(p *progressStream) {
	if p == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.streams = append(f.streams, p)
	if f.state.Phase == "" {
		return // nothing to catch up on
	}
	state := f.state
	p.update(func(e *ProgressEvent) {
		// The phase after resolving is the joining request's own.
		state.install = e.install
		if state.Phase == "resolved" {
			resolvingDone(&state)
		}
		*e = state
	})
}

// update changes the shared progress and every joined stream.
func (f *progressFanout) update(change func(*ProgressEvent)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	change(&f.state)
	for _, p := range f.streams {
		p.update(change)
	}
}

// joinFlight returns the fanout of the shared plan under key, creating it,
// with p added.
func (s *Server) joinFlight(key string, p *progressStream) *progressFanout {
	s.flightMu.Lock()
	defer s.flightMu.Unlock()
	f, ok := s.flights[key]
	if !ok {
		f = &progressFanout{}
		s.flights[key] = f
	}
	f.add(p)
	return f
}

// leaveFlight forgets the fanout of a finished shared plan.
func (s *Server) leaveFlight(key string, f *progressFanout) {
	s.flightMu.Lock()
	defer s.flightMu.Unlock()
	if s.flights[key] == f {
		delete(s.flights, key)
	}
}
