package marketplace

import (
	"os"
	"testing"
)

func BenchmarkParse1k(b *testing.B) {
	data, err := os.ReadFile("/tmp/pf/doc1k.json")
	if err != nil {
		b.Skip(err)
	}
	for b.Loop() {
		if _, err := ClaudeDocument.Parse(data, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
