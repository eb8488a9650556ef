package github_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/semaphore"

	"reasonix.io/plugind/resolver/host"
)

// TestArchiveWaitsForAWriteSlot: with every slot of FetchOptions.Writes
// taken, an archive fetch sends its requests (the network is not what the
// slots bound) but writes nothing until a slot is free, and gives up with
// its context; once a slot is free it writes the tree and gives the slot
// back.
func TestArchiveWaitsForAWriteSlot(t *testing.T) {
	t.Parallel()
	s := newAPIServer(t)
	serveArchive(s, shaA, s.URL+"/codeload/acme/tools/tar.gz/"+shaA, tarGz(t, shaA, map[string]string{"README.md": "hi"}))
	writes := semaphore.NewWeighted(1)
	if !writes.TryAcquire(1) {
		t.Fatal("a fresh semaphore refused its slot")
	}
	repo := openREST(t, s, token)

	dest := filepath.Join(t.TempDir(), "waiting")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := repo.Fetch(ctx, shaA, dest, host.FetchOptions{Writes: writes}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("fetch with every slot taken: %v, want the context's deadline", err)
	}
	if got := strings.Join(s.requests(), " "); !strings.Contains(got, "/codeload/acme/tools/tar.gz/"+shaA) {
		t.Errorf("requests %q: the archive was not asked for while waiting for a slot", got)
	}
	if _, err := os.Lstat(dest); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s was made without a slot (%v)", dest, err)
	}

	writes.Release(1)
	dest = filepath.Join(t.TempDir(), "written")
	if _, err := repo.Fetch(context.Background(), shaA, dest, host.FetchOptions{Writes: writes}); err != nil {
		t.Fatal(err)
	}
	if on := filesUnder(t, dest); strings.Join(on, " ") != "README.md" {
		t.Errorf("wrote %q, want README.md", on)
	}
	if !writes.TryAcquire(1) {
		t.Error("the fetch kept its slot")
	}
}
