// Command bulk is the helper of bench/bulk.sh (SPEC §14, issue 13). It has
// three subcommands:
//
//	bulk serve -entries 300 -repos 50 [-relative N] [-rich] [-repo-files N] [-api-budget N] -dir DIR
//	    builds a synthetic marketplace on the fake GitHub (internal/fakegithub,
//	    loopback, real git) and serves it until interrupted. Its shape is
//	    internal/bulkmarket's: entries/5 (or -relative) plugins in bulk/market, the
//	    others round robin in repos plugin repositories bulk/repoNNN,
//	    github, url and git-subdir entries, half of the pins off a branch
//	    tip; -rich makes it look like the large real marketplaces.
//	    Writes, in DIR: env (export lines for REASONIX_GITHUB_URL and
//	    REASONIX_GITHUB_API_URL), source (what to install), targets (one
//	    line per repository: "OWNER/NAME SHA ARCHIVE_URL CLONE_URL", the
//	    commit being the one entries pin, for the floors), and ready (last,
//	    when everything is served). Every archive is made once before
//	    ready, so neither the floors nor reasonix pay for git archive.
//	    Requests are logged to stderr as fakegithub's command logs them.
//	    With -import OWNER/NAME=DIR (repeatable) it serves those folders'
//	    trees as single-commit repositories instead (the first is the
//	    marketplace); targets then lists those.
//
//	bulk strace -file FILE -files N
//	    reads `strace -c -f -o FILE` output and prints one line: total
//	    calls, filesystem metadata calls (see metadataCalls), fsync-family
//	    calls, and each per installed file (N files), then the five
//	    commonest metadata calls.
//
//	bulk response < RESPONSE.json
//	    summarises a reasonix response on one line:
//	    ok=… status=… planId=… actions=… by_status=… transports=… errorCode=…
//
//	bulk files DIR
//	    counts the regular files below DIR (installed plugin files).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"

	"reasonix.io/plugind/internal/bulkmarket"
	"reasonix.io/plugind/internal/fakegithub"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = serveCmd(os.Args[2:])
	case "strace":
		err = straceCmd(os.Args[2:], os.Stdout)
	case "response":
		err = responseCmd(os.Stdin, os.Stdout)
	case "files":
		if len(os.Args) != 3 {
			usage()
		}
		var n int
		n, err = countFiles(os.Args[2])
		if err == nil {
			fmt.Println(n)
		}
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bulk:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: bulk serve (-entries N -repos R | -import OWNER/NAME=DIR ...) -dir DIR\n"+
		"       bulk strace -file FILE -files N\n"+
		"       bulk files DIR")
	os.Exit(2)
}

type importFlags []string

func (f *importFlags) String() string     { return strings.Join(*f, ",") }
func (f *importFlags) Set(v string) error { *f = append(*f, v); return nil }

func serveCmd(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	entries := fs.Int("entries", 300, "marketplace entries")
	repos := fs.Int("repos", 50, "plugin repositories (besides the marketplace's)")
	relative := fs.Int("relative", 0, "entries in the marketplace's own repository (default entries/5)")
	repoFiles := fs.Int("repo-files", 0, "documentation files added beside the plugins of each plugin repository (large repositories)")
	apiBudget := fs.Int("api-budget", 0, "GitHub's REST budget: REST requests without a token allowed an hour (0: none; GitHub's is 60)")
	rich := fs.Bool("rich", false, "a marketplace like the large real ones: long entries, plugins of 22 files, backups, docs and catalogs beside them")
	dir := fs.String("dir", "", "work directory (must exist)")
	latency := fs.Duration("latency", 0, "added to every request once the archives are built (a server that far away; 0: none)")
	var imports importFlags
	fs.Var(&imports, "import", "OWNER/NAME=DIR: serve DIR's tree as that repository (repeatable; the first is the marketplace)")
	_ = fs.Parse(args)
	if *dir == "" {
		return errors.New("serve: -dir is required")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fakeDir := filepath.Join(*dir, "fake")
	if err := os.MkdirAll(fakeDir, 0o755); err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	// Its repositories never change once built: git's answers are kept too.
	gh, err := fakegithub.Start(fakeDir, fakegithub.WithLogger(logger), fakegithub.WithAPIBudget(*apiBudget, time.Hour), fakegithub.WithGitCache())
	if err != nil {
		return err
	}
	defer gh.Close()

	var targets []target
	var src string
	if len(imports) > 0 {
		targets, src, err = importRepos(gh, imports)
	} else {
		targets, src, err = build(gh, bulkmarket.Shape{Entries: *entries, Repos: *repos, Relative: *relative, Rich: *rich, RepoFiles: *repoFiles})
	}
	if err != nil {
		return err
	}
	// Every archive is built before anything is timed, so the floors and
	// reasonix download prebuilt archives, as from GitHub's caches.
	if err := prewarm(ctx, targets); err != nil {
		return err
	}
	if *latency < 0 {
		return fmt.Errorf("serve: -latency %s is negative", *latency)
	}
	if *latency > 0 {
		gh.Fault(fakegithub.RouteAll, fakegithub.Fault{Stall: *latency})
	}
	var tl strings.Builder
	for _, t := range targets {
		fmt.Fprintf(&tl, "%s %s %s %s\n", t.repo.Path(), t.sha, t.archiveURL(gh), t.repo.CloneURL())
	}
	env := fmt.Sprintf("export REASONIX_GITHUB_URL=%s\nexport REASONIX_GITHUB_API_URL=%s\n", gh.URL, gh.APIURL)
	for name, body := range map[string]string{"targets": tl.String(), "env": env, "source": src + "\n"} {
		if err := os.WriteFile(filepath.Join(*dir, name), []byte(body), 0o644); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(*dir, "ready"), []byte(gh.URL+"\n"), 0o644); err != nil {
		return err
	}
	<-ctx.Done()
	return nil
}

type target struct {
	repo *fakegithub.Repo
	sha  string
}

// archiveURL is the REST tarball link (it redirects to the archive), what a
// client of github.com asks.
func (t target) archiveURL(gh *fakegithub.Server) string {
	return gh.APIURL + "/repos/" + t.repo.Path() + "/tarball/" + t.sha
}

// prewarm downloads every archive once, so the fake has made them all
// before anything is timed.
func prewarm(ctx context.Context, targets []target) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(4)
	for _, t := range targets {
		g.Go(func() error {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.repo.ArchiveURL(t.sha), nil)
			if err != nil {
				return err
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			if _, err := io.Copy(io.Discard, resp.Body); err != nil {
				return err
			}
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("prewarm %s: %s", t.repo.Path(), resp.Status)
			}
			return nil
		})
	}
	return g.Wait()
}

// build makes the synthetic marketplace (internal/bulkmarket) and returns
// the floors' targets (every plugin repository at its pinned commit, and
// the marketplace) and the source to install.
func build(gh *fakegithub.Server, shape bulkmarket.Shape) ([]target, string, error) {
	m, err := bulkmarket.Build(gh, shape)
	if err != nil {
		return nil, "", err
	}
	targets := make([]target, len(m.Targets))
	for i, t := range m.Targets {
		targets[i] = target{t.Repo, t.SHA}
	}
	return targets, m.Source, nil
}

// importRepos serves each OWNER/NAME=DIR as one commit; the first is the
// marketplace.
func importRepos(gh *fakegithub.Server, imports []string) ([]target, string, error) {
	var targets []target
	for _, spec := range imports {
		full, dir, ok := strings.Cut(spec, "=")
		owner, name, ok2 := strings.Cut(full, "/")
		if !ok || !ok2 {
			return nil, "", fmt.Errorf("-import wants OWNER/NAME=DIR, got %q", spec)
		}
		repo, sha, err := gh.ImportDir(owner, name, dir)
		if err != nil {
			return nil, "", err
		}
		targets = append(targets, target{repo, sha})
	}
	return targets, "https://github.com/" + targets[0].repo.Path(), nil
}

// metadataCalls are the syscalls counted as filesystem metadata: looking
// paths up, listing, creating and removing names, and changing modes and
// times. Reads, writes and syncs of content are not metadata; opens are
// reported on their own.
var metadataCalls = map[string]bool{
	"newfstatat": true, "fstat": true, "stat": true, "lstat": true, "statx": true, "fstatat64": true,
	"getdents64": true, "getdents": true,
	"mkdirat": true, "mkdir": true, "unlinkat": true, "unlink": true, "rmdir": true,
	"renameat": true, "renameat2": true, "rename": true,
	"fchmodat": true, "fchmod": true, "chmod": true, "fchmodat2": true,
	"utimensat": true, "readlinkat": true, "readlink": true, "symlinkat": true, "linkat": true,
	"faccessat": true, "faccessat2": true, "access": true, "fchownat": true,
}

var syncCalls = map[string]bool{"fsync": true, "fdatasync": true, "syncfs": true, "sync_file_range": true}

func straceCmd(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("strace", flag.ExitOnError)
	file := fs.String("file", "", "strace -c output")
	files := fs.Int("files", 0, "installed files")
	_ = fs.Parse(args)
	data, err := os.ReadFile(*file)
	if err != nil {
		return err
	}
	calls := parseStrace(string(data))
	var total, meta, syncs, opens int
	type kv struct {
		name string
		n    int
	}
	var metaList []kv
	for name, n := range calls {
		total += n
		switch {
		case metadataCalls[name]:
			meta += n
			metaList = append(metaList, kv{name, n})
		case syncCalls[name]:
			syncs += n
		case name == "openat" || name == "open":
			opens += n
		}
	}
	sort.Slice(metaList, func(i, j int) bool { return metaList[i].n > metaList[j].n })
	per := func(n int) string {
		if *files <= 0 {
			return "-"
		}
		return strconv.FormatFloat(float64(n)/float64(*files), 'f', 1, 64)
	}
	fmt.Fprintf(w, "syscalls=%d meta=%d meta_per_file=%s opens=%d opens_per_file=%s syncs=%d files=%d top=", total, meta, per(meta), opens, per(opens), syncs, *files)
	for i, e := range metaList {
		if i == 5 {
			break
		}
		if i > 0 {
			fmt.Fprint(w, ",")
		}
		fmt.Fprintf(w, "%s:%d", e.name, e.n)
	}
	fmt.Fprintln(w)
	return nil
}

// parseStrace reads the calls column of strace -c's table: lines of
// "% time seconds usecs/call calls [errors] syscall".
func parseStrace(s string) map[string]int {
	out := map[string]int{}
	for _, line := range strings.Split(s, "\n") {
		f := strings.Fields(line)
		if len(f) < 5 || f[len(f)-1] == "total" {
			continue
		}
		if _, err := strconv.ParseFloat(f[0], 64); err != nil {
			continue
		}
		n, err := strconv.Atoi(f[3])
		if err != nil {
			continue
		}
		out[f[len(f)-1]] += n
	}
	return out
}

func countFiles(dir string) (int, error) {
	n := 0
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			n++
		}
		return nil
	})
	return n, err
}

// response is the part of a reasonix response (SPEC §11) the table shows.
type response struct {
	OK        bool   `json:"ok"`
	Status    string `json:"status"`
	PlanID    string `json:"planId"`
	ErrorCode string `json:"errorCode"`
	Resolved  *struct {
		Transport string `json:"transport"`
	} `json:"resolved"`
	Actions []struct {
		Status string `json:"status"`
	} `json:"actions"`
}

func responseCmd(r io.Reader, w io.Writer) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	var resp response
	if err := json.Unmarshal(data, &resp); err != nil {
		line, _, _ := strings.Cut(strings.TrimSpace(string(data)), "\n")
		fmt.Fprintf(w, "ok=false status=unparsable error=%q\n", line)
		return nil
	}
	byStatus := map[string]int{}
	for _, a := range resp.Actions {
		byStatus[a.Status]++
	}
	var statuses []string
	for st, n := range byStatus {
		statuses = append(statuses, fmt.Sprintf("%s:%d", st, n))
	}
	sort.Strings(statuses)
	transport := ""
	if resp.Resolved != nil {
		transport = resp.Resolved.Transport
	}
	fmt.Fprintf(w, "ok=%t status=%s planId=%s actions=%d by_status=%s transport=%s errorCode=%s\n",
		resp.OK, resp.Status, resp.PlanID, len(resp.Actions), strings.Join(statuses, ","), transport, resp.ErrorCode)
	return nil
}
