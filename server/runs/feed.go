package runs

import (
	"context"
	"sync"
)

// EventType says what an Event carries.
type EventType string

// Event types of a run's feed.
const (
	// EventState: the run changed state (queued, running, its end); Run
	// is its snapshot. The last event of every feed is the final state.
	EventState EventType = "state"
	// EventProgress: a new progress line; Progress is set.
	EventProgress EventType = "progress"
	// EventLog: Text was appended to the log at Offset.
	EventLog EventType = "log"
)

// Event is one thing that happened to a run.
type Event struct {
	Type     EventType `json:"type"`
	Run      *Run      `json:"run,omitempty"`
	Progress *Progress `json:"progress,omitempty"`
	Offset   int64     `json:"offset,omitempty"`
	Text     string    `json:"text,omitempty"`
}

// FeedBuffer is each subscriber's buffer. A subscriber that falls behind
// by more loses events (never the final state): it sees a jump in the log
// offsets and can read the log from where it is with GET .../log?offset=.
const FeedBuffer = 256

// feed fans a run's events out to its subscribers.
type feed struct {
	mu    sync.Mutex
	subs  map[chan Event]struct{}
	ended bool
}

// publish sends ev to every subscriber without waiting for any.
func (f *feed) publish(ev Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for ch := range f.subs {
		select {
		case ch <- ev:
		default: // a slow subscriber loses this event
		}
	}
}

// end sends the final state, making room for it if need be, and closes
// every subscription.
func (f *feed) end(final Run) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for ch := range f.subs {
		ev := Event{Type: EventState, Run: ptr(final)}
		for {
			select {
			case ch <- ev:
			default:
				select {
				case <-ch:
				default:
				}
				continue
			}
			break
		}
		close(ch)
	}
	f.subs, f.ended = nil, true
}

func (f *feed) subscribe(first Event) (chan Event, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ended {
		return nil, false
	}
	if f.subs == nil {
		f.subs = map[chan Event]struct{}{}
	}
	ch := make(chan Event, FeedBuffer)
	ch <- first
	f.subs[ch] = struct{}{}
	return ch, true
}

func (f *feed) unsubscribe(ch chan Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.subs[ch]; ok {
		delete(f.subs, ch)
		close(ch)
	}
}

// Subscribe returns a run's events as they happen, starting with its
// current state, and a function that ends the subscription. The channel
// is closed after the final state, or by the function; for a run that
// has ended it holds the final state alone.
func (e *Executor) Subscribe(ctx context.Context, id int64) (<-chan Event, func(), error) {
	e.mu.Lock()
	a, live := e.live[id]
	var snap Run
	if live {
		snap = e.snapshotLocked(a)
	}
	e.mu.Unlock()
	if live {
		if ch, ok := a.subscribe(Event{Type: EventState, Run: ptr(snap)}); ok {
			return ch, func() { a.unsubscribe(ch) }, nil
		}
	}
	r, err := e.store.get(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	ch := make(chan Event, 1)
	ch <- Event{Type: EventState, Run: &r}
	close(ch)
	return ch, func() {}, nil
}

func ptr[T any](v T) *T { return &v }
