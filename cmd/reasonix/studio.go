package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"reasonix.io/plugind"
	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/server"
)

// studio opens the installer page of the home's daemon in a browser,
// signed in, starting the daemon first when none answers. The bearer token
// stays in this process: the browser gets a single-use login code.
func (m *Main) studioCommand() *cobra.Command {
	var noOpen bool
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "studio",
		Short: "Open the installer page in a browser, signed in (starts the daemon if needed)",
		Example: `  reasonix studio
  reasonix studio --no-open`,
		Long: `Open the installer page of ` + "`reasonix serve`" + ` in your browser, signed in.

studio finds the daemon of the Reasonix home through serve.addr, and first asks what answers there
to prove it holds the token in serve.token (a keyed hash of a fresh nonce and the address,
so the token itself is not sent). When nothing answers, or what answers cannot prove it (a
daemon killed without cleaning up leaves serve.addr behind, and another program may listen on
that port since), it starts ` + "`reasonix serve --addr 127.0.0.1:0`" + ` in the background (its log goes
to serve.log in the home) and waits for it. Over the proven connection it then asks, with the
token, for a sign-in link that works once, for one minute, and opens it with xdg-open (open on
macOS). With no browser opener, or with --no-open, it prints the link instead. The token never
reaches the browser: the link becomes a session there.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			home, err := installer.DefaultHome(m.Getenv)
			if err != nil {
				return fail(m.Stderr, err)
			}
			daemon, token, err := m.ensureDaemon(ctx, home, wait)
			if err != nil {
				return fail(m.Stderr, err)
			}
			defer daemon.Close()
			addr := daemon.Addr
			code, err := loginCode(ctx, daemon, token)
			if err != nil {
				return fail(m.Stderr, err)
			}
			link := "http://" + addr + "/login?code=" + code
			opener := ""
			if !noOpen {
				opener = browserOpener()
			}
			if opener != "" {
				err := openLink(ctx, opener, link)
				if err == nil {
					fmt.Fprintf(m.Stdout, "Opened http://%s/ in your browser, signed in.\n", addr)
					return nil
				}
				fmt.Fprintf(m.Stderr, "reasonix: %s could not open a browser (%s)\n", filepath.Base(opener), safeText(err.Error()))
			}
			fmt.Fprintf(m.Stdout, "Open this link in your browser within a minute (it signs you in once):\n%s\n", link)
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&noOpen, "no-open", false, "print the sign-in link instead of opening a browser")
	f.DurationVar(&wait, "wait", 20*time.Second, "how long to wait for a daemon started in the background")
	return cmd
}

// ensureDaemon returns a connection to the home's running daemon, proven
// to hold the home's token (server.ProveDaemon), and that token; it starts
// a daemon in the background when serve.addr names none that proves it.
func (m *Main) ensureDaemon(ctx context.Context, home installer.Home, wait time.Duration) (*server.ProvenDaemon, string, error) {
	addrPath := home.AddrPath()
	stale, err := server.ReadAddrFile(addrPath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return m.startDaemon(ctx, home, wait)
	case err != nil:
		return nil, "", err
	}
	// Without a token file there is no daemon of this home to prove
	// itself: the one starting below creates the token.
	token, terr := server.ReadToken(home.TokenPath())
	if terr != nil && !errors.Is(terr, fs.ErrNotExist) {
		return nil, "", terr
	}
	if terr == nil {
		d, err := server.ProveDaemon(ctx, stale, token)
		if err == nil {
			return d, token, nil
		}
		if errors.Is(err, server.ErrNotProven) {
			fmt.Fprintf(m.Stderr, "reasonix: warning: %s (the address in %s); the token was not sent there; starting a daemon of this home\n", safeText(err.Error()), addrPath)
		}
	}
	// A daemon that died without cleaning up: its address is ours to drop.
	if err := server.RemoveAddrFile(addrPath, stale); err != nil {
		return nil, "", err
	}
	return m.startDaemon(ctx, home, wait)
}

// startDaemon starts `reasonix serve --addr 127.0.0.1:0` detached from
// this terminal (its own session, stdin from /dev/null, output appended to
// serve.log) and waits until it has written serve.addr and proves itself
// there.
func (m *Main) startDaemon(ctx context.Context, home installer.Home, wait time.Duration) (*server.ProvenDaemon, string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, "", fmt.Errorf("start the daemon: find this program: %w", err)
	}
	if err := plugind.MkdirPrivate(home.Dir); err != nil {
		return nil, "", fmt.Errorf("start the daemon: %w", err)
	}
	logPath := home.LogPath()
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, plugind.PrivateFileMode)
	if err != nil {
		return nil, "", fmt.Errorf("start the daemon: %w", err)
	}
	defer logFile.Close()
	child := exec.Command(exe, "serve", "--addr", "127.0.0.1:0")
	// The daemon serves this home whatever its environment would pick.
	child.Env = append(os.Environ(), "REASONIX_HOME="+home.Dir)
	child.Stdout, child.Stderr = logFile, logFile
	child.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := child.Start(); err != nil {
		return nil, "", fmt.Errorf("start the daemon: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- child.Wait() }()
	fmt.Fprintf(m.Stderr, "reasonix: started the daemon (pid %d; log %s)\n", child.Process.Pid, logPath)

	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		// The daemon writes serve.addr once it listens, after the token.
		if addr, err := server.ReadAddrFile(home.AddrPath()); err == nil {
			if token, err := server.ReadToken(home.TokenPath()); err == nil {
				if d, err := server.ProveDaemon(ctx, addr, token); err == nil {
					return d, token, nil
				}
			}
		}
		select {
		case err := <-exited:
			return nil, "", fmt.Errorf("the daemon exited before it listened (%v); its log %s ends with:\n%s", err, logPath, safeText(logTail(logPath, 2048)))
		case <-deadline.C:
			return nil, "", fmt.Errorf("the daemon (pid %d) did not answer within %s; see %s", child.Process.Pid, wait, logPath)
		case <-ctx.Done():
			return nil, "", ctx.Err()
		case <-tick.C:
		}
	}
}

// logTail returns the last n bytes of a log, for an error message.
func logTail(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return ""
	}
	if info.Size() > n {
		if _, err := f.Seek(info.Size()-n, io.SeekStart); err != nil {
			return ""
		}
	}
	b, _ := io.ReadAll(f)
	return strings.TrimSpace(string(b))
}

// loginCode asks the proven daemon for a single-use sign-in code, over
// the connection that gave the proof.
func loginCode(ctx context.Context, d *server.ProvenDaemon, token string) (string, error) {
	addr := d.Addr
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/auth/code", nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := d.Client.Do(req)
	if err != nil {
		return "", fmt.Errorf("ask the daemon at %s for a sign-in code: %w", addr, err)
	}
	defer resp.Body.Close()
	var body struct {
		Code  string `json:"code"`
		Error string `json:"error"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&body); err != nil {
		return "", fmt.Errorf("the daemon at %s answered %d, not a sign-in code: %w", addr, resp.StatusCode, err)
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		return "", fmt.Errorf("the daemon at %s refused this home's token: it serves another home, or serve.token changed since it started (restart it)", addr)
	case resp.StatusCode != http.StatusOK || body.Code == "":
		return "", fmt.Errorf("the daemon at %s refused a sign-in code (%d): %s", addr, resp.StatusCode, body.Error)
	}
	return body.Code, nil
}

// browserOpener finds the program that opens a link in the user's browser
// (xdg-open; open on macOS) on the PATH, "" when there is none.
func browserOpener() string {
	name := "xdg-open"
	if runtime.GOOS == "darwin" {
		name = "open"
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return ""
	}
	return p
}

// openLink runs the opener on link. xdg-open returns once the browser has
// the link; a browser it starts outlives it and may keep its output open,
// so that output goes to a file (a pipe would make this wait for the
// browser to exit).
func openLink(ctx context.Context, opener, link string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := os.CreateTemp("", "reasonix-open-*.log")
	if err != nil {
		return err
	}
	defer os.Remove(out.Name())
	defer out.Close()
	c := exec.CommandContext(ctx, opener, link)
	c.Stdout, c.Stderr = out, out
	if err := c.Run(); err != nil {
		if msg := strings.TrimSpace(logTail(out.Name(), 512)); msg != "" {
			return fmt.Errorf("%w: %s", err, msg)
		}
		return err
	}
	return nil
}
