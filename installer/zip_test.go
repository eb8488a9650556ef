package installer

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"reasonix.io/plugind"
)

// zipEntry is one entry of a hand-made archive.
type zipEntry struct {
	name    string
	content string
	symlink bool
	size    int64 // when > 0: that many zero bytes instead of content
}

func buildZip(t *testing.T, entries []zipEntry) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "p.zip")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zw := zip.NewWriter(f)
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) { return flate.NewWriter(w, flate.BestSpeed) })
	for _, e := range entries {
		// Only the large zero-filled entries are worth deflating; a flate
		// writer per tiny entry makes the 20,001-entry archive take a minute
		// under -race.
		method := zip.Store
		if e.size > 0 {
			method = zip.Deflate
		}
		hdr := &zip.FileHeader{Name: e.name, Method: method}
		hdr.SetMode(0o644)
		if e.symlink {
			hdr.SetMode(os.ModeSymlink | 0o777)
		}
		w, err := zw.CreateHeader(hdr)
		if err != nil {
			t.Fatal(err)
		}
		if e.size > 0 {
			if _, err := io.CopyN(w, zeros{}, e.size); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if _, err := w.Write([]byte(e.content)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// TestZipRefusalsLeaveNothing installs hostile zips: each is refused with the
// right code, and nothing is left in plugins/, the store or its staging.
func TestZipRefusalsLeaveNothing(t *testing.T) {
	t.Parallel()
	manifest := zipEntry{name: ".claude-plugin/plugin.json", content: `{"name":"z"}`}
	skill := zipEntry{name: "skills/a/SKILL.md", content: "---\ndescription: a\n---\n"}
	many := []zipEntry{manifest, skill}
	for i := range 60 {
		many = append(many, zipEntry{name: "data/" + strconv.Itoa(i%10) + "/" + strconv.Itoa(i)})
	}
	tests := []struct {
		name    string
		entries []zipEntry
		code    plugind.Code
		frag    string
	}{
		{"dot-dot", []zipEntry{manifest, skill, {name: "../x", content: "escape"}}, plugind.CodeUnsafeArchive, "../x"},
		{"absolute", []zipEntry{manifest, skill, {name: "/etc/x", content: "escape"}}, plugind.CodeUnsafeArchive, "/etc/x"},
		{"escaping symlink", []zipEntry{manifest, skill, {name: "skills/a/leak", content: "../../../../etc/passwd", symlink: true}}, plugind.CodeUnsafeArchive, "leak"},
		{"over the file budget", many, plugind.CodeBudgetExceeded, "limit 50"},
		{"over the size budget", []zipEntry{manifest, skill, {name: "big.bin", size: 2 << 20}}, plugind.CodeBudgetExceeded, "size budget"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := newEnvBudget(t, plugind.Budget{MaxBytes: 1 << 20, MaxFiles: 50})
			env.mustInstall(claudePlugin(t, "keep", "1"))
			before := env.registryBytes()
			zipPath := buildZip(t, tt.entries)
			resp, err := env.install(Request{Source: mustSource(zipPath)}, Approval{Yes: true})
			wantCode(t, err, resp, tt.code, tt.frag)
			if !bytes.Equal(before, env.registryBytes()) {
				t.Error("registry changed")
			}
			if ents := env.pluginsDirEntries(); len(ents) != 1 || ents[0] != "keep" {
				t.Errorf("plugins/ = %v", ents)
			}
			if ents := env.storeStagingEntries(); len(ents) != 0 {
				t.Errorf("store staging left behind: %v", ents)
			}
			if snaps, _ := os.ReadDir(filepath.Join(env.home.StoreDir(), "snapshots")); len(snaps) != 0 {
				t.Errorf("store holds %d snapshots after a refused zip", len(snaps))
			}
		})
	}
}
