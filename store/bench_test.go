package store

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// BenchmarkCommit measures committing a 1,000-file, 16 MiB tree, and the
// durability step alone with one syncfs(2) against an fsync per entry.
func BenchmarkCommit(b *testing.B) {
	files := map[string]file{}
	body := strings.Repeat("z", 16<<10)
	for i := 0; i < 1000; i++ {
		files[fmt.Sprintf("d%02d/f%04d", i%40, i)] = file{body: fmt.Sprint(i) + body}
	}
	b.Run("commit", func(b *testing.B) {
		s := openStore(b, Options{})
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			st, err := s.Stage()
			if err != nil {
				b.Fatal(err)
			}
			writeTree(b, st.Dir, files)
			b.StartTimer()
			d, err := s.Commit(context.Background(), st)
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if err := s.Remove(d); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	})
	for _, m := range []struct {
		name string
		sync func(*Store, string) error
	}{{"syncTree", (*Store).syncTree}, {"fsyncEach", func(_ *Store, root string) error { return syncEach(root) }}} {
		b.Run(m.name, func(b *testing.B) {
			s := openStore(b, Options{})
			st, err := s.Stage()
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = st.Discard() }()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				_ = st.Discard()
				st, _ = s.Stage()
				writeTree(b, st.Dir, files)
				b.StartTimer()
				if err := m.sync(s, st.Dir); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
