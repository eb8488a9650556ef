package server

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/renameio/v2"

	"reasonix.io/plugind"
	"reasonix.io/plugind/resolver/host"
)

// WriteAddrFile records addr (host:port, one line) in path, the home's
// installer.Home.AddrPath, so `reasonix studio` finds the daemon without
// knowing the port it picked. It writes atomically (a reader never sees half
// a line), private to the user like the rest of the home. The address is
// not a secret, and `reasonix studio` sends the token to what it names only
// once the listener there has proved it holds the token (ProveDaemon): a
// stale file left by a killed daemon is not enough to receive it.
func WriteAddrFile(path, addr string) error {
	if err := plugind.MkdirPrivate(filepath.Dir(path)); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := renameio.WriteFile(path, []byte(addr+"\n"), plugind.PrivateFileMode); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// RemoveAddrFile removes path if it still names addr: another daemon may
// have started over the same home since and written its own.
func RemoveAddrFile(path, addr string) error {
	got, err := ReadAddrFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil || got != addr {
		return err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", path, err)
	}
	return nil
}

// ReadAddrFile returns the address in path; fs.ErrNotExist when there is
// no file. An address that is not a loopback host:port is an error: the
// file must not send a token anywhere else.
func ReadAddrFile(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	addr := strings.TrimSpace(string(data))
	name, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" || port == "0" {
		return "", fmt.Errorf("%s does not hold a HOST:PORT address (%q); remove it", path, addr)
	}
	if !host.IsLoopbackHost(name) {
		return "", fmt.Errorf("%s names %s, which is not a loopback address; refusing to send the token there", path, addr)
	}
	return addr, nil
}
