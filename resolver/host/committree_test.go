package host

import (
	"context"
	"errors"
	"testing"
	"time"
)

// commitTreeRepo is a host that reads commits: it fails transiently
// failures times, then answers.
type commitTreeRepo struct {
	*fakeRepo
	failures, calls int
}

func (c *commitTreeRepo) CommitTree(context.Context, string) (CommitTree, error) {
	c.calls++
	if c.calls <= c.failures {
		return CommitTree{}, errors.New("connection reset")
	}
	return CommitTree{ID: "4b825dc642cb6eb9a060e54bf8d69288fbee4904"}, nil
}

// Retry passes CommitTree down, repeating a transient failure, and says
// a host that cannot read commits cannot.
func TestRetryCommitTree(t *testing.T) {
	t.Parallel()
	inner := &commitTreeRepo{fakeRepo: newFakeRepo(t, testURL), failures: 1}
	r := NewRetry(inner, nil)
	r.Wait = time.Millisecond
	ct, err := r.CommitTree(context.Background(), "0123456789abcdef0123456789abcdef01234567")
	if err != nil || ct.ID == "" || inner.calls != 2 {
		t.Fatalf("%+v, %v after %d calls; want the answer of the second", ct, err, inner.calls)
	}
	plain := NewRetry(newFakeRepo(t, testURL), nil)
	if _, err := plain.CommitTree(context.Background(), "0123456789abcdef0123456789abcdef01234567"); !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("%v, want unsupported", err)
	}
}
