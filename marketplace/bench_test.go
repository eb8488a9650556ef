package marketplace

import (
	"fmt"
	"strings"
	"testing"
)

// benchDocument is a 300-entry marketplace like SPEC §14's bulk one:
// relative, url+sha, github+sha and git-subdir entries with the metadata
// real entries carry.
func benchDocument(entries int) []byte {
	var b strings.Builder
	b.WriteString(`{"name":"bulk","owner":{"name":"Bench","email":"bench@example.com"},"metadata":{"description":"bench","version":"1.0.0"},"plugins":[`)
	sha := strings.Repeat("a1", 20)
	for i := range entries {
		if i > 0 {
			b.WriteByte(',')
		}
		var src string
		switch i % 4 {
		case 0:
			src = fmt.Sprintf(`"./plugins/p%03d"`, i)
		case 1:
			src = fmt.Sprintf(`{"source":"url","url":"https://github.com/bulk/repo%02d.git","sha":%q,"path":"plugins/p%03d"}`, i%50, sha, i)
		case 2:
			src = fmt.Sprintf(`{"source":"github","repo":"bulk/repo%02d","sha":%q}`, i%50, sha)
		default:
			src = fmt.Sprintf(`{"source":"git-subdir","url":"https://github.com/bulk/repo%02d","path":"plugins/p%03d","ref":"main"}`, i%50, i)
		}
		fmt.Fprintf(&b, `{"name":"p%03d","description":"Plugin number %d — does things \"well\"","version":"1.%d.0","author":{"name":"Bench Author","email":"a@example.com"},"category":"development","keywords":["bench","plugin"],"tags":["x"],"homepage":"https://example.com/p%d","license":"MIT","source":%s}`, i, i, i, i, src)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// BenchmarkParse times parsing (and checking) the 300-entry document, the
// part of a warm re-plan spent on the marketplace itself.
//
//	go test -run '^$' -bench Parse ./marketplace
func BenchmarkParse(b *testing.B) {
	data := benchDocument(300)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		m, err := Parse(data, Options{})
		if err != nil || len(m.Entries) != 300 {
			b.Fatal(err)
		}
	}
}
