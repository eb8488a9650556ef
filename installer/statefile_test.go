package installer

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reasonix.io/plugind"
)

// The registry and the known marketplaces are read by one rule: what each
// refuses, and how the refusal reads (path and all), table by table.
func TestStateFilesRefuse(t *testing.T) {
	t.Parallel()
	load := map[string]func(string) error{
		"registry": func(p string) error { _, err := LoadRegistry(p); return err },
		"known":    func(p string) error { _, err := LoadMarketplaces(p); return err },
	}
	for _, tc := range []struct {
		name, file, body, want string
	}{
		{"registry corrupt", "registry", `{"version":1,"plugins":[`,
			`registry PATH is corrupt (unexpected EOF); the file was left untouched, repair or move it aside`},
		{"registry unknown field", "registry", `{"version":1,"plugins":[],"extra":1}`,
			`registry PATH is corrupt (json: unknown field "extra"); the file was left untouched, repair or move it aside`},
		{"registry no version", "registry", `{"plugins":[]}`,
			`registry PATH has version 0; this reasonix reads version 1`},
		{"registry version 2", "registry", `{"version":2,"plugins":[]}`,
			`registry PATH has version 2; this reasonix reads version 1`},
		{"registry twice", "registry", `{"version":1,"plugins":[{"name":"a"},{"name":"a"}]}`,
			`registry PATH lists "a" twice`},
		{"registry bad name", "registry", `{"version":1,"plugins":[{"name":"../x"}]}`,
			`registry PATH: `},
		{"registry source not a string", "registry", `{"version":1,"plugins":[{"name":"a","source":1}]}`,
			`registry PATH is corrupt (json: cannot unmarshal number into Go struct field Registry.plugins.0.source of type source.Source`},
		{"registry bad source", "registry", `{"version":1,"plugins":[{"name":"a","source":"https://github.com/o/r"},{"name":"b","source":"http://github.com/o/r"}]}`,
			`registry PATH is corrupt (source "http://github.com/o/r": only https:// is allowed (plain http is unencrypted)); the file was left untouched, repair or move it aside`},
		{"known corrupt", "known", `{"version":1,"marketplaces":[`,
			`known marketplaces PATH are corrupt (unexpected EOF); the file was left untouched, repair or move it aside`},
		{"known version", "known", `{"version":3,"marketplaces":[]}`,
			`known marketplaces PATH have version 3; this reasonix reads version 1`},
		{"known twice", "known", `{"version":1,"marketplaces":[{"name":"m"},{"name":"m"}]}`,
			`known marketplaces PATH list "m" twice`},
		{"known bad name", "known", `{"version":1,"marketplaces":[{"name":""}]}`,
			`known marketplaces PATH: `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "state.json")
			if err := os.WriteFile(path, []byte(tc.body), 0o600); err != nil {
				t.Fatal(err)
			}
			err := load[tc.file](path)
			if err == nil {
				t.Fatal("loaded")
			}
			if got := plugind.CodeOf(err); got != plugind.CodeRegistryUnreadable {
				t.Errorf("code %q, want %q", got, plugind.CodeRegistryUnreadable)
			}
			if want := strings.ReplaceAll(tc.want, "PATH", path); !strings.HasPrefix(err.Error(), want) {
				t.Errorf("error\n %s\nwant it to begin\n %s", err, want)
			}
			if got, _ := os.ReadFile(path); string(got) != tc.body {
				t.Errorf("the refused file changed: %q", got)
			}
		})
	}
}

// A file that cannot be read (here: a folder where the file belongs) is
// registry.unreadable, naming it.
func TestStateFilesUnreadable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := LoadRegistry(dir); err == nil || plugind.CodeOf(err) != plugind.CodeRegistryUnreadable || !strings.HasPrefix(err.Error(), "read registry "+dir+": ") {
		t.Errorf("registry: %v", err)
	}
	if _, err := LoadMarketplaces(dir); err == nil || plugind.CodeOf(err) != plugind.CodeRegistryUnreadable || !strings.HasPrefix(err.Error(), "read known marketplaces "+dir+": ") {
		t.Errorf("known marketplaces: %v", err)
	}
}

// Saving writes the bytes the daemon and the CLI have always written:
// sorted by name, two-space indent, a final newline, mode 0600; a missing
// file loads as an empty document at the current version (its list nil
// in the registry, written as null; [] in the known marketplaces).
func TestStateFilesSave(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	resaves := map[string]func(path string) error{
		"registry": func(p string) error {
			r, err := LoadRegistry(p)
			if err != nil {
				return err
			}
			return r.Save(p)
		},
		"known": func(p string) error {
			m, err := LoadMarketplaces(p)
			if err != nil {
				return err
			}
			return m.Save(p)
		},
	}
	for _, tc := range []struct {
		name string
		save func(path string) error
		want string
	}{
		{"registry empty", resaves["registry"], "{\n  \"version\": 1,\n  \"plugins\": null\n}\n"},
		{"registry sorted", func(p string) error {
			r, err := LoadRegistry(p)
			if err != nil {
				return err
			}
			r.Put(Entry{Name: "zeta", Source: mustSource("git:github.com/o/z"), Root: "plugins/zeta", ManifestKind: "reasonix", Enabled: true, InstalledAt: at, Status: "ok"})
			r.Put(Entry{Name: "alpha", Source: mustSource("/src/a"), Root: "plugins/alpha", ManifestKind: "claude", InstalledAt: at, Status: "ok", Link: true})
			return r.Save(p)
		}, `{
  "version": 1,
  "plugins": [
    {
      "name": "alpha",
      "source": "/src/a",
      "root": "plugins/alpha",
      "manifestKind": "claude",
      "enabled": false,
      "installedAt": "2026-01-02T03:04:05Z",
      "status": "ok",
      "link": true
    },
    {
      "name": "zeta",
      "source": "git:github.com/o/z",
      "root": "plugins/zeta",
      "manifestKind": "reasonix",
      "enabled": true,
      "installedAt": "2026-01-02T03:04:05Z",
      "status": "ok"
    }
  ]
}
`},
		{"known empty", resaves["known"], "{\n  \"version\": 1,\n  \"marketplaces\": []\n}\n"},
		{"known sorted", func(p string) error {
			m, err := LoadMarketplaces(p)
			if err != nil {
				return err
			}
			m.Marketplaces = append(m.Marketplaces,
				KnownMarketplace{Name: "team", Source: mustSource("git:github.com/o/team"), Commit: "abc", ReadAt: at, AddedAt: at},
				KnownMarketplace{Name: "local", Source: mustSource("/m"), Description: "mine", ReadAt: at, AddedAt: at})
			return m.Save(p)
		}, `{
  "version": 1,
  "marketplaces": [
    {
      "name": "local",
      "source": "/m",
      "description": "mine",
      "readAt": "2026-01-02T03:04:05Z",
      "addedAt": "2026-01-02T03:04:05Z"
    },
    {
      "name": "team",
      "source": "git:github.com/o/team",
      "commit": "abc",
      "readAt": "2026-01-02T03:04:05Z",
      "addedAt": "2026-01-02T03:04:05Z"
    }
  ]
}
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "state.json")
			resave := resaves[strings.Fields(tc.name)[0]]
			if err := tc.save(path); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("saved\n%s\nwant\n%s", got, tc.want)
			}
			info, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if perm := info.Mode().Perm(); perm != plugind.PrivateFileMode {
				t.Errorf("mode %#o, want %#o", perm, plugind.PrivateFileMode)
			}
			// What was saved loads again, and saves to the same bytes.
			if err := resave(path); err != nil {
				t.Fatal(err)
			}
			if again, _ := os.ReadFile(path); string(again) != tc.want {
				t.Errorf("loaded and saved again\n%s", again)
			}
		})
	}
}

// A save that cannot publish (the folder is gone) is publication.failed,
// naming the file, and leaves nothing behind.
func TestStateFilesSaveFails(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "gone", "state.json")
	for name, save := range map[string]func() error{
		"publish registry ":           func() error { return (&Registry{Version: registryVersion}).Save(path) },
		"publish known marketplaces ": func() error { return (&Marketplaces{Version: marketplacesVersion}).Save(path) },
	} {
		err := save()
		if err == nil || plugind.CodeOf(err) != plugind.CodePublicationFailed || !strings.HasPrefix(err.Error(), name+path+": ") {
			t.Errorf("%s: %v", name, err)
		}
		if _, statErr := os.Stat(filepath.Dir(path)); !errors.Is(statErr, os.ErrNotExist) {
			t.Errorf("%s: the save created %s", name, filepath.Dir(path))
		}
	}
}
