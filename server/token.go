package server

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"reasonix.io/plugind"
)

// minTokenLen bounds how short a hand-written token may be.
const minTokenLen = 32

// LoadOrCreateToken returns the daemon's bearer token from path (the home's
// serve.token), creating it on first start: 32 bytes from crypto/rand, hex,
// mode 0600. The file appears whole (written to a temporary file, then
// hard-linked into place, which fails if another daemon created it first; the
// loser reads the winner's). A token file others can read is refused rather
// than used: anyone who reads it controls the daemon.
func LoadOrCreateToken(path string) (token string, created bool, err error) {
	tok, err := readToken(path)
	if err == nil {
		return tok, false, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", false, err
	}
	if err := plugind.MkdirPrivate(filepath.Dir(path)); err != nil {
		return "", false, fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	tok = randomString(32, hex.EncodeToString)
	// CreateTemp makes the file 0600: the token is never readable by others.
	tmp, err := os.CreateTemp(filepath.Dir(path), ".serve.token-*")
	if err != nil {
		return "", false, fmt.Errorf("create token: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.WriteString(tok + "\n")
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", false, fmt.Errorf("create token: %w", err)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			tok, err := readToken(path)
			return tok, false, err
		}
		return "", false, fmt.Errorf("create token %s: %w", path, err)
	}
	return tok, true, nil
}

func readToken(path string) (string, error) {
	info, err := os.Lstat(path)
	if err != nil {
		return "", err
	}
	if !info.Mode().IsRegular() {
		return "", fmt.Errorf("token file %s is not a regular file; remove it and start again to get a new token", path)
	}
	if perm := info.Mode().Perm(); perm&0o077 != 0 {
		return "", fmt.Errorf("token file %s has mode %#o: others can read it; run `chmod 600 %s`, or remove it to get a new token", path, perm, path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("read token %s: %w", path, err)
	}
	tok := strings.TrimSpace(string(data))
	if len(tok) < minTokenLen || strings.ContainsAny(tok, " \t\r\n") {
		return "", fmt.Errorf("token file %s does not hold a token (one line, at least %d characters); remove it to get a new one", path, minTokenLen)
	}
	return tok, nil
}

// ReadToken reads the token file a running daemon created, with the same
// checks as LoadOrCreateToken (regular file, mode 0600, one token line),
// and never creates one: `reasonix studio` uses it to talk to the daemon.
func ReadToken(path string) (string, error) {
	tok, err := readToken(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("no token file at %s: start the daemon with `reasonix serve`: %w", path, err)
	}
	return tok, err
}
