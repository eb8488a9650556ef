package server

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"reasonix.io/plugind/installer"
)

// TestShutdownDuringInstall stops the daemon while an install is between
// staging and publication. With time to finish, the install completes and
// its client gets the answer; with no grace, it is cancelled and discarded
// whole. Either way the registry is the old or the new state and nothing
// staged is left behind.
func TestShutdownDuringInstall(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name      string
		grace     time.Duration
		completes bool
	}{
		{"graceful", 10 * time.Second, true},
		{"cancelled", -1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, envOpts{})
			old := plugin(t, t.TempDir(), "keep", "1.0.0")
			if r := e.installByPlanID(e.plan(installer.Request{Source: mustSource(old)}).PlanID); r.status != 200 {
				t.Fatalf("install: %s", r.body)
			}
			before := e.registryBytes()
			plan := e.plan(installer.Request{Source: mustSource(plugin(t, t.TempDir(), "late", "1.0.0"))})

			srv, err := New(Config{Installer: e.in, Token: testToken, Log: NewLogger(e.log, 0), ShutdownTimeout: c.grace})
			if err != nil {
				t.Fatal(err)
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			ctx, stop := context.WithCancel(context.Background())
			served := make(chan error, 1)
			go func() { served <- srv.Serve(ctx, ln) }()

			staged := make(chan struct{})
			release := make(chan struct{})
			e.setHook(func(step string) {
				if step == "after-staging" {
					close(staged)
					<-release
				}
			})
			answered := make(chan reply, 1)
			go func() {
				answered <- doURL(t, "http://"+ln.Addr().String(), "POST", "/plugins/install", map[string]string{"planId": plan.PlanID}, nil)
			}()
			<-staged
			stop() // SIGTERM
			// Let Shutdown begin (and, with no grace, cancel) before the
			// install goes on to publish.
			time.Sleep(100 * time.Millisecond)
			close(release)
			if err := <-served; err != nil {
				t.Fatalf("Serve: %v", err)
			}
			r := <-answered
			after := e.registryBytes()
			reg, err := installer.LoadRegistry(e.home.RegistryPath())
			if err != nil {
				t.Fatal(err)
			}
			if c.completes {
				if r.status != 200 || len(reg.Plugins) != 2 {
					t.Fatalf("graceful: answer %d %s; registry %s", r.status, r.body, after)
				}
			} else {
				if r.status != http.StatusServiceUnavailable || !bytes.Equal(before, after) {
					t.Fatalf("cancelled: answer %d %s; registry changed: %v", r.status, r.body, !bytes.Equal(before, after))
				}
			}
			ents, _ := os.ReadDir(e.home.PluginsDir())
			for _, ent := range ents {
				if strings.HasPrefix(ent.Name(), ".") {
					t.Fatalf("left behind in plugins/: %s", ent.Name())
				}
			}
			if want := len(reg.Plugins); len(ents) != want {
				t.Fatalf("plugins/ holds %d entries, registry %d", len(ents), want)
			}
			for _, p := range reg.Plugins {
				if _, err := os.Stat(filepath.Join(p.Root, ".claude-plugin", "plugin.json")); err != nil {
					t.Fatalf("registered root %s: %v", p.Root, err)
				}
			}
		})
	}
}
