package mirrortest

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"time"

	"reasonix.io/plugind/app"
	"reasonix.io/plugind/installer"
	"reasonix.io/plugind/internal/fakegithub"
	"reasonix.io/plugind/resolver"
	"reasonix.io/plugind/resolver/host"
	"reasonix.io/plugind/source"
)

// UpstreamConfig is how a replica (or a client falling back) reaches the
// fake GitHub: exactly as a client would, every other host sent to a
// closed loopback port so nothing can reach the internet.
func UpstreamConfig(gh *fakegithub.Server) (*resolver.HostConfig, error) {
	rw, err := host.ParseRewrite("https://=http://127.0.0.1:1/")
	if err != nil {
		return nil, err
	}
	return &resolver.HostConfig{
		GitHubURL: gh.URL, APIURL: gh.APIURL, Rewrite: rw,
		Net: host.NetConfig{Timeout: 30 * time.Second, MaxRetryAfter: 2 * time.Second},
	}, nil
}

// Upstream is a replica's upstream (UpstreamConfig).
func Upstream(gh *fakegithub.Server) (*resolver.Hosts, error) {
	cfg, err := UpstreamConfig(gh)
	if err != nil {
		return nil, err
	}
	return resolver.NewHosts(*cfg)
}

// OpenClient opens one machine's backend, its REASONIX_HOME at home, with
// env as its environment (REASONIX_MIRROR, REASONIX_MIRROR_TOKEN,
// REASONIX_MIRROR_ONLY…), wired as app.Open wires it, its upstream gh.
func OpenClient(ctx context.Context, home string, env map[string]string, gh *fakegithub.Server, log *slog.Logger) (*app.App, error) {
	getenv := func(k string) string {
		if k == "REASONIX_HOME" {
			return home
		}
		return env[k]
	}
	up, err := UpstreamConfig(gh)
	if err != nil {
		return nil, err
	}
	return app.Open(ctx, app.OpenOptions{Getenv: getenv, Hosts: up, Log: log})
}

// InstallThroughMirror is one machine of a fleet: a client whose home is
// home, listing the replicas at urls in that order, bulk-installs src with
// --yes, env adding to its environment (REASONIX_CHECKSUM_LOG…). It
// returns the installed plugins' digests by name; any action that did not
// install is an error.
func InstallThroughMirror(ctx context.Context, home string, urls []string, token string, env map[string]string, gh *fakegithub.Server, src string) (map[string]string, error) {
	vars := map[string]string{"REASONIX_MIRROR": strings.Join(urls, ","), "REASONIX_MIRROR_TOKEN": token}
	maps.Copy(vars, env)
	a, err := OpenClient(ctx, home, vars, gh, nil)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	parsed, err := source.Parse(src)
	if err != nil {
		return nil, err
	}
	resp, err := a.Installer.Install(ctx, installer.Request{Source: parsed}, installer.Approval{Yes: true})
	if err != nil || !resp.Applied {
		return nil, fmt.Errorf("install %s: applied %v: %v", src, resp != nil && resp.Applied, err)
	}
	for _, act := range resp.Actions {
		if act.Err != nil {
			return nil, fmt.Errorf("%s: %v", act.Name, act.Err)
		}
	}
	reg, err := installer.LoadRegistry(a.Home.RegistryPath())
	if err != nil {
		return nil, err
	}
	digests := map[string]string{}
	for _, e := range reg.Plugins {
		digests[e.Name] = e.ContentDigest
	}
	return digests, nil
}
