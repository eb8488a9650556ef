package fakegithub

import "testing"

// New starts a fake GitHub on 127.0.0.1 for the test, with its repositories
// under t.TempDir(), and closes it when the test ends. Helper errors fail t.
func New(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s, err := start(t.TempDir(), t, opts)
	if err != nil {
		t.Fatalf("fakegithub: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("fakegithub: close: %v", err)
		}
	})
	return s
}
