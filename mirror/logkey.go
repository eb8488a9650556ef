package mirror

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"strings"

	"golang.org/x/mod/sumdb/note"
)

// LogKey is the checksum log's signing key (SPEC §17): every replica of a
// mirror reads the same key file, and since ed25519 signatures are
// deterministic, replicas at the same tree sign the same head.
type LogKey struct {
	Signer note.Signer
	// Verifier is the public verifier key "NAME+HASH+KEY" that clients
	// put in REASONIX_CHECKSUM_LOG.
	Verifier string
	// Path is the file it was read from; Exposed, that other users may
	// read it (the replica warns at start: a mounted secret is often 0644).
	Path    string
	Exposed bool
}

// maxKeyFile bounds a key file's read: a note signer key is under 200 bytes.
const maxKeyFile = 4 << 10

// CreateLogKey makes a new signing key for a log named name (note's key
// name: text without spaces or '+', such as the mirror's host name),
// writes it to path, mode 0600, and returns the verifier key. It never
// replaces a file: clients trust the key they were given, and a replaced
// key would make every one of them refuse the log.
func CreateLogKey(name, path string) (verifier string, err error) {
	if err := CheckLogKeyName(name); err != nil {
		return "", err
	}
	skey, vkey, err := note.GenerateKey(rand.Reader, name)
	if err != nil {
		return "", fmt.Errorf("log key: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("log key %s exists: refusing to replace it (clients trust the key it holds; remove it first if you mean to)", path)
	}
	if err != nil {
		return "", fmt.Errorf("log key: %w", err)
	}
	_, err = io.WriteString(f, skey+"\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(path) // half a key is no key
		return "", fmt.Errorf("write log key %s: %w", path, err)
	}
	return vkey, nil
}

// keyName is what a log's name may be: note allows any text without
// spaces or '+', but clients keep a log's tiles and latest head in a
// folder of that name, so it is held to a host name's characters.
var keyName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)

// CheckLogKeyName refuses a name CreateLogKey would not take.
func CheckLogKeyName(name string) error {
	if !keyName.MatchString(name) {
		return fmt.Errorf("log key name %q: want letters, digits, '.', '-' or '_', at most 100, such as the mirror's host name", name)
	}
	return nil
}

// ReadLogKey reads the key file CreateLogKey wrote. An error names the
// file and what is wrong with it, never its content.
func ReadLogKey(path string) (*LogKey, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--log-key: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxKeyFile+1))
	if err != nil {
		return nil, fmt.Errorf("--log-key %s: %w", path, err)
	}
	if len(b) > maxKeyFile {
		return nil, fmt.Errorf("--log-key %s: over %d bytes, so not a log key (reasonix mirror log-key create makes one)", path, maxKeyFile)
	}
	skey := strings.TrimSpace(string(b))
	bad := func(why string) error {
		return fmt.Errorf("--log-key %s: %s (reasonix mirror log-key create makes one)", path, why)
	}
	if !strings.HasPrefix(skey, "PRIVATE+KEY+") {
		return nil, bad("not a note signer key (one line starting PRIVATE+KEY+)")
	}
	signer, err := note.NewSigner(skey)
	if err != nil {
		// note's messages name the fault, never the key.
		return nil, bad("not a valid note signer key: " + err.Error())
	}
	// Named only once the key is known well formed: a name read from a
	// malformed line may be key material.
	if CheckLogKeyName(signer.Name()) != nil {
		return nil, bad(fmt.Sprintf("its name %q is not one reasonix mirror log-key create would make (letters, digits, '.', '-', '_')", signer.Name()))
	}
	vkey, err := verifierOf(skey, signer)
	if err != nil {
		return nil, bad(err.Error())
	}
	k := &LogKey{Signer: signer, Verifier: vkey, Path: path}
	if info, err := f.Stat(); err == nil {
		k.Exposed = info.Mode().Perm()&0o077 != 0
	}
	return k, nil
}

// verifierOf derives the verifier key of a signer key note.NewSigner
// accepted ("PRIVATE+KEY+NAME+HASH+BASE64(alg || seed)"), so a replica can
// tell its operator which key its clients need.
func verifierOf(skey string, s note.Signer) (string, error) {
	f := strings.SplitN(skey, "+", 5) // base64 has '+' of its own
	raw, err := base64.StdEncoding.DecodeString(f[len(f)-1])
	if err != nil || len(raw) != 1+ed25519.SeedSize {
		return "", errors.New("not an Ed25519 note signer key")
	}
	pub := ed25519.NewKeyFromSeed(raw[1:]).Public().(ed25519.PublicKey)
	vkey, err := note.NewEd25519VerifierKey(s.Name(), pub)
	if err != nil {
		return "", err
	}
	if v, err := note.NewVerifier(vkey); err != nil || v.KeyHash() != s.KeyHash() {
		return "", errors.New("its verifier key does not match its hash")
	}
	return vkey, nil
}
