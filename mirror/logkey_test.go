package mirror_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"

	"reasonix.io/plugind/mirror"
)

func TestCreateAndReadLogKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "log.key")
	vkey, err := mirror.CreateLogKey("mirror.example.test", path)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, %v; want mode 0600", info, err)
	}
	k, err := mirror.ReadLogKey(path)
	if err != nil {
		t.Fatal(err)
	}
	if k.Verifier != vkey || k.Signer.Name() != "mirror.example.test" || k.Exposed || k.Path != path {
		t.Fatalf("read back %q named %q; created %q", k.Verifier, k.Signer.Name(), vkey)
	}
	// What it signs, the verifier it printed opens.
	v, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	signed, err := note.Sign(&note.Note{Text: "go.sum database tree\n1\nAAAA\n"}, k.Signer)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := note.Open(signed, note.VerifierList(v)); err != nil {
		t.Fatalf("the printed verifier key does not verify the key's signature: %v", err)
	}

	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if k, err := mirror.ReadLogKey(path); err != nil || !k.Exposed {
		t.Fatalf("a key others may read: %+v %v", k, err)
	}

	before, _ := os.ReadFile(path)
	if _, err := mirror.CreateLogKey("mirror.example.test", path); err == nil || !strings.Contains(err.Error(), "refusing to replace") {
		t.Fatalf("creating over an existing key: %v", err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Fatal("the existing key was changed")
	}
}

func TestLogKeyNames(t *testing.T) {
	t.Parallel()
	for name, ok := range map[string]bool{
		"mirror.example.test": true, "log_1": true, "a": true,
		"": false, "a+b": false, "a b": false, "../x": false, "a/b": false, ".hidden": false,
		strings.Repeat("a", 101): false, "naïve": false,
	} {
		err := mirror.CheckLogKeyName(name)
		if (err == nil) != ok {
			t.Errorf("CheckLogKeyName(%q) = %v, want ok %v", name, err, ok)
		}
		path := filepath.Join(t.TempDir(), "k")
		_, err = mirror.CreateLogKey(name, path)
		if (err == nil) != ok {
			t.Errorf("CreateLogKey(%q) = %v, want ok %v", name, err, ok)
		}
		if _, serr := os.Stat(path); !ok && serr == nil {
			t.Errorf("CreateLogKey(%q) refused the name but wrote a file", name)
		}
	}
}

func TestReadLogKeyRefusesBadFiles(t *testing.T) {
	t.Parallel()
	skey, vkey, err := note.GenerateKey(nil, "log.example.test")
	if err != nil {
		t.Fatal(err)
	}
	other, _, _ := note.GenerateKey(nil, "log.example.test")
	parts := strings.SplitN(skey, "+", 5) // base64 has '+' of its own
	secret := parts[4]
	wrongHash := strings.Join(append(append([]string{}, parts[:3]...), "00000000", parts[4]), "+")
	badName, _, _ := note.GenerateKey(nil, "log/x") // note takes it; clients keep a folder of that name
	cases := map[string]string{
		"renamed":          strings.Replace(skey, "+log.example.test+", "+log.other.test+", 1),
		"empty":            "",
		"verifier key":     vkey + "\n",
		"garbage":          "hello\n",
		"truncated":        skey[:len(skey)-10] + "\n",
		"wrong hash":       wrongHash + "\n",
		"two keys":         skey + "\n" + other + "\n",
		"bad name":         badName + "\n",
		"huge":             strings.Repeat("x", 8<<10),
		"not base64":       strings.Join(append(append([]string{}, parts[:4]...), "!!!!"), "+"),
		"private key text": "PRIVATE+KEY+" + secret,
	}
	dir := t.TempDir()
	for name, content := range cases {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".key")
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		k, err := mirror.ReadLogKey(path)
		switch {
		case err == nil:
			t.Errorf("%s: accepted as %+v", name, k)
		case !strings.Contains(err.Error(), path):
			t.Errorf("%s: the error does not name the file: %v", name, err)
		case strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), parts[4][:12]):
			t.Errorf("%s: the error shows key material: %v", name, err)
		}
	}
	missing := filepath.Join(dir, "missing.key")
	if _, err := mirror.ReadLogKey(missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("a missing file: %v", err)
	}
	good := filepath.Join(dir, "good.key")
	if err := os.WriteFile(good, []byte("  "+skey+"\n\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if k, err := mirror.ReadLogKey(good); err != nil || k.Verifier != vkey {
		t.Errorf("a key with spaces around it: %+v, %v", k, err)
	}
}
