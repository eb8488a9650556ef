package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"reasonix.io/plugind/internal/parity"
)

// compareCmd is `sidebyside compare`: after both tools installed the entries
// of one real marketplace (bench/claude-side-by-side.sh --real), it lines up
// every entry of the marketplace with what each tool did with it, and
// compares the trees both installed file by file (paths, bytes, exec bits,
// symlink targets).
func compareCmd(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("compare", flag.ExitOnError)
	market := fs.String("market", "", "the marketplace.json both tools installed from")
	claudeDir := fs.String("claude-config", "", "Claude Code's config dir (CLAUDE_CONFIG_DIR; holds plugins/installed_plugins.json)")
	claudeLogs := fs.String("claude-logs", "", "directory of NAME.log (output of `claude plugin install NAME@MARKET`) and NAME.rc (its exit status)")
	rxHome := fs.String("reasonix-home", "", "REASONIX_HOME the marketplace was installed into")
	rxResp := fs.String("reasonix-response", "", "the JSON response of `reasonix plugin install MARKETPLACE --yes`")
	maxFiles := fs.Int("max-files", 4, "differing files named per plugin")
	_ = fs.Parse(args)
	for name, v := range map[string]string{"-market": *market, "-claude-config": *claudeDir, "-claude-logs": *claudeLogs,
		"-reasonix-home": *rxHome, "-reasonix-response": *rxResp} {
		if v == "" {
			return fmt.Errorf("compare: %s is required", name)
		}
	}
	entries, mktName, err := readEntries(*market)
	if err != nil {
		return err
	}
	claude, err := readClaude(*claudeDir, *claudeLogs, mktName)
	if err != nil {
		return err
	}
	rx, err := readReasonix(*rxHome, *rxResp)
	if err != nil {
		return err
	}
	rows := make([]row, 0, len(entries))
	for _, e := range entries {
		r := rx[e.Name]
		if r.Root == "" && r.Reason == "" {
			r.Reason = rx[""].Reason // the response failed as a whole
		}
		rows = append(rows, compareEntry(e, claude[e.Name], r))
	}
	printReport(stdout, mktName, rows, *maxFiles)
	return nil
}

// namesCmd prints the entries' names, one a line; with -served only those
// whose content can come from the given repositories (relative entries and
// entries naming one of them); with -market the marketplace's own name.
func namesCmd(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("names", flag.ContinueOnError)
	market := fs.Bool("market", false, "print the marketplace's name")
	served := fs.String("served", "", "comma-separated OWNER/NAME list: only entries relative or naming one of them")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("names: want [-market] [-served LIST] MARKETPLACE.json")
	}
	entries, name, err := readEntries(fs.Arg(0))
	if err != nil {
		return err
	}
	if *market {
		fmt.Fprintln(stdout, name)
		return nil
	}
	keep := map[string]bool{}
	for _, r := range strings.Split(*served, ",") {
		keep[strings.ToLower(r)] = true
	}
	for _, e := range entries {
		if *served != "" && e.Repo != "" && !keep[strings.ToLower(e.Repo)] {
			continue
		}
		fmt.Fprintln(stdout, e.Name)
	}
	return nil
}

// mktEntry is one marketplace entry as the table describes it.
type mktEntry struct {
	Name string
	Kind string // relative, url, git-subdir, github, npm…; "+strict:false" when so
	Repo string // the repository a non-relative entry names
}

func readEntries(path string) ([]mktEntry, string, error) {
	name, entries, err := parity.ReadMarketplace(path)
	if err != nil {
		return nil, "", err
	}
	out := make([]mktEntry, 0, len(entries))
	for _, p := range entries {
		e := mktEntry{Name: p.Name, Kind: p.Kind}
		if p.Kind != "relative" {
			e.Repo = p.Repo
		}
		if p.Unpinned() {
			e.Kind += "(unpinned)"
		}
		if !p.Strict {
			e.Kind += "+strict:false"
		}
		out = append(out, e)
	}
	return out, name, nil
}

// outcome is what one tool did with one entry: the installed tree, or why
// there is none.
type outcome struct {
	Root   string // installed tree; "" when not installed
	Reason string // why not installed (or a warning when installed)
}

var ansi = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)

// readClaude maps entry names to Claude's outcome: installed_plugins.json
// for what it installed, each install's log for why it did not.
func readClaude(configDir, logs, mkt string) (map[string]outcome, error) {
	out := map[string]outcome{}
	data, err := os.ReadFile(filepath.Join(configDir, "plugins", "installed_plugins.json"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read claude's installed plugins: %w", err)
	}
	if err == nil {
		var doc struct {
			Plugins map[string][]struct {
				InstallPath string `json:"installPath"`
			} `json:"plugins"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			return nil, fmt.Errorf("claude's installed_plugins.json: %w", err)
		}
		for key, installs := range doc.Plugins {
			name, m, _ := strings.Cut(key, "@")
			if m != mkt || len(installs) == 0 {
				continue
			}
			out[name] = outcome{Root: installs[0].InstallPath}
		}
	}
	ents, err := os.ReadDir(logs)
	if err != nil {
		return nil, fmt.Errorf("read claude's install logs: %w", err)
	}
	for _, de := range ents {
		name, ok := strings.CutSuffix(de.Name(), ".log")
		if !ok {
			continue
		}
		if _, installed := out[name]; installed {
			continue
		}
		text, err := os.ReadFile(filepath.Join(logs, de.Name()))
		if err != nil {
			return nil, err
		}
		out[name] = outcome{Reason: oneLine(ansi.ReplaceAllString(string(text), ""), 300)}
	}
	return out, nil
}

// readReasonix maps entry names to reasonix's outcome: plugin-packages.json
// for what it installed, the install response's actions for the rest.
func readReasonix(home, respPath string) (map[string]outcome, error) {
	out := map[string]outcome{}
	data, err := os.ReadFile(filepath.Join(home, "plugin-packages.json"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read reasonix registry: %w", err)
	}
	if err == nil {
		var reg struct {
			Plugins []struct {
				Name string `json:"name"`
				Root string `json:"root"`
			} `json:"plugins"`
		}
		if err := json.Unmarshal(data, &reg); err != nil {
			return nil, fmt.Errorf("reasonix plugin-packages.json: %w", err)
		}
		for _, p := range reg.Plugins {
			out[p.Name] = outcome{Root: p.Root}
		}
	}
	data, err = os.ReadFile(respPath)
	if err != nil {
		return nil, fmt.Errorf("read reasonix response: %w", err)
	}
	var resp struct {
		Error     string `json:"error"`
		ErrorCode string `json:"errorCode"`
		Actions   []struct {
			Name      string   `json:"name"`
			Status    string   `json:"status"`
			Error     string   `json:"error"`
			ErrorCode string   `json:"errorCode"`
			Warnings  []string `json:"warnings"`
		} `json:"actions"`
	}
	if err := json.Unmarshal(data, &resp); err != nil {
		// A killed or crashed reasonix leaves no response: every entry it
		// did not install says so, rather than the report going missing.
		out[""] = outcome{Reason: fmt.Sprintf("no reasonix response (%s: %v)", respPath, err)}
		return out, nil
	}
	for _, a := range resp.Actions {
		o := out[a.Name]
		if o.Root != "" {
			continue
		}
		reason := a.Status
		if a.ErrorCode != "" {
			reason += " " + a.ErrorCode
		}
		if a.Error != "" {
			reason += ": " + a.Error
		}
		o.Reason = oneLine(reason, 300)
		out[a.Name] = o
	}
	if resp.Error != "" {
		// A response that failed as a whole leaves entries without an action.
		out[""] = outcome{Reason: oneLine(resp.ErrorCode+": "+resp.Error, 300)}
	}
	return out, nil
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > max {
		s = s[:max] + "…"
	}
	return s
}

// row is one marketplace entry in the report.
type row struct {
	Entry          mktEntry
	Claude, RX     outcome
	Compared       bool
	Diffs          []string
	ClaudeFiles    int
	ReasonixFiles  int
	CompareProblem string
}

func compareEntry(e mktEntry, c, r outcome) row {
	rw := row{Entry: e, Claude: c, RX: r}
	if c.Root == "" || r.Root == "" {
		return rw
	}
	ct, err := snapshotTree(c.Root)
	if err != nil {
		rw.CompareProblem = err.Error()
		return rw
	}
	rt, err := snapshotTree(r.Root)
	if err != nil {
		rw.CompareProblem = err.Error()
		return rw
	}
	rw.Compared = true
	rw.ClaudeFiles, rw.ReasonixFiles = len(ct), len(rt)
	rw.Diffs = diffTrees(ct, rt)
	return rw
}

// fileInfo is what two installed copies must agree on for one path.
type fileInfo struct {
	Kind string // file, symlink, other
	Exec bool
	Sum  string // sha256 of a file's bytes, or a symlink's target
	Size int64
}

// claudeRuntimeDirs are folders Claude Code writes into an installed
// plugin's root while it runs, not part of what it installed: .in_use holds
// one {"pid","procStart"} file per claude process that loaded the plugin
// (every later `claude plugin install` adds one to each installed plugin).
var claudeRuntimeDirs = map[string]bool{".in_use": true}

// snapshotTree describes every non-directory entry below root by its
// slash-separated relative path. Directories are implied by their contents:
// git records none, so an empty one says nothing about the plugin. Claude's
// runtime folders at the root are left out.
func snapshotTree(root string) (map[string]fileInfo, error) {
	out := map[string]fileInfo{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && filepath.Dir(path) == root && claudeRuntimeDirs[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fi := fileInfo{Kind: "other", Size: info.Size()}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			fi.Kind, fi.Sum = "symlink", target
		case info.Mode().IsRegular():
			sum, err := fileSum(path)
			if err != nil {
				return err
			}
			fi.Kind, fi.Sum, fi.Exec = "file", sum, info.Mode()&0o111 != 0
		}
		out[filepath.ToSlash(rel)] = fi
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("walk %s: %w", root, err)
	}
	return out, nil
}

func fileSum(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// diffTrees lists, sorted by path, how Claude's tree c and reasonix's tree r
// differ: "only claude: P", "only reasonix: P", "bytes: P (N vs M)",
// "exec: P (claude +x)", "kind: P (file vs symlink)", "symlink: P".
func diffTrees(c, r map[string]fileInfo) []string {
	paths := make([]string, 0, len(c)+len(r))
	for p := range c {
		paths = append(paths, p)
	}
	for p := range r {
		if _, ok := c[p]; !ok {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)
	var out []string
	gitOnly := map[string]int{} // side -> files of a root .git/ only it has
	for _, p := range paths {
		a, inC := c[p]
		b, inR := r[p]
		if strings.HasPrefix(p, gitDirPrefix) && inC != inR {
			if inC {
				gitOnly["claude"]++
			} else {
				gitOnly["reasonix"]++
			}
			continue
		}
		switch {
		case !inR:
			out = append(out, "only claude: "+p)
		case !inC:
			out = append(out, "only reasonix: "+p)
		case a.Kind != b.Kind:
			out = append(out, fmt.Sprintf("kind: %s (claude %s, reasonix %s)", p, a.Kind, b.Kind))
		case a.Kind == "symlink" && a.Sum != b.Sum:
			out = append(out, fmt.Sprintf("symlink: %s (claude -> %s, reasonix -> %s)", p, a.Sum, b.Sum))
		case a.Sum != b.Sum:
			out = append(out, fmt.Sprintf("bytes: %s (claude %d B, reasonix %d B)", p, a.Size, b.Size))
		case a.Exec != b.Exec:
			who := "claude"
			if b.Exec {
				who = "reasonix"
			}
			out = append(out, fmt.Sprintf("exec: %s (only %s +x)", p, who))
		}
	}
	for _, side := range []string{"claude", "reasonix"} {
		if n := gitOnly[side]; n > 0 {
			out = append(out, fmt.Sprintf("only %s: %s (%d files)", side, gitDirPrefix, n))
		}
	}
	return out
}

// gitDirPrefix is a git directory at the plugin's root. Claude Code installs
// a url entry by cloning it into its cache and keeps the clone's .git; one
// side having it is one line in the report, not hundreds.
const gitDirPrefix = ".git/"

// onlyGitDir reports whether every difference is a root .git/ one side has.
func onlyGitDir(diffs []string) bool {
	for _, d := range diffs {
		if !strings.HasSuffix(d, " files)") || !strings.Contains(d, ": "+gitDirPrefix+" (") {
			return false
		}
	}
	return len(diffs) > 0
}

func printReport(w io.Writer, mkt string, rows []row, maxFiles int) {
	var both, identical, gitOnly, onlyC, onlyR, neither, problems int
	kinds := map[string][4]int{} // kind -> entries, both, identical, neither
	for _, r := range rows {
		k := kinds[r.Entry.Kind]
		k[0]++
		switch {
		case r.Compared:
			both++
			k[1]++
			switch {
			case len(r.Diffs) == 0:
				identical++
				k[2]++
			case onlyGitDir(r.Diffs):
				gitOnly++
			}
		case r.CompareProblem != "":
			problems++
		case r.Claude.Root != "":
			onlyC++
		case r.RX.Root != "":
			onlyR++
		default:
			neither++
			k[3]++
		}
		kinds[r.Entry.Kind] = k
	}
	fmt.Fprintf(w, "Marketplace %s: %d entries. Installed by both: %d (%d identical file by file, %d identical but for "+
		"a .git/ only one has, %d differing otherwise); only Claude: %d; only reasonix: %d; neither: %d; not comparable: %d\n\n",
		mkt, len(rows), both, identical, gitOnly, both-identical-gitOnly, onlyC, onlyR, neither, problems)
	kindNames := make([]string, 0, len(kinds))
	for k := range kinds {
		kindNames = append(kindNames, k)
	}
	sort.Strings(kindNames)
	fmt.Fprintf(w, "%-28s %7s %6s %9s %7s\n", "entry kind", "entries", "both", "identical", "neither")
	for _, k := range kindNames {
		v := kinds[k]
		fmt.Fprintf(w, "%-28s %7d %6d %9d %7d\n", k, v[0], v[1], v[2], v[3])
	}
	fmt.Fprintf(w, "\n%-44s %-22s %-6s %-8s %-9s %s\n", "plugin", "entry kind", "claude", "reasonix", "identical", "files (claude/reasonix), differing files")
	yn := func(o outcome) string {
		if o.Root != "" {
			return "yes"
		}
		return "no"
	}
	for _, r := range rows {
		ident, detail := "-", ""
		switch {
		case r.Compared && len(r.Diffs) == 0:
			ident, detail = "yes", fmt.Sprintf("%d/%d", r.ClaudeFiles, r.ReasonixFiles)
		case r.Compared && onlyGitDir(r.Diffs):
			ident, detail = "but .git", fmt.Sprintf("%d/%d, %s", r.ClaudeFiles, r.ReasonixFiles, strings.Join(r.Diffs, "; "))
		case r.Compared:
			ident = "NO"
			shown := r.Diffs
			if len(shown) > maxFiles {
				shown = shown[:maxFiles]
			}
			detail = fmt.Sprintf("%d/%d, %d differ: %s", r.ClaudeFiles, r.ReasonixFiles, len(r.Diffs), strings.Join(shown, "; "))
			if len(r.Diffs) > maxFiles {
				detail += "; …"
			}
		case r.CompareProblem != "":
			ident, detail = "?", r.CompareProblem
		}
		fmt.Fprintf(w, "%-44s %-22s %-6s %-8s %-9s %s\n", r.Entry.Name, r.Entry.Kind, yn(r.Claude), yn(r.RX), ident, detail)
	}
	section := func(title string, keep func(row) bool) {
		var sel []row
		for _, r := range rows {
			if keep(r) {
				sel = append(sel, r)
			}
		}
		fmt.Fprintf(w, "\n%s: %d\n", title, len(sel))
		for _, r := range sel {
			repo := ""
			if r.Entry.Repo != "" {
				repo = " [" + r.Entry.Repo + "]"
			}
			fmt.Fprintf(w, "- %s (%s)%s\n", r.Entry.Name, r.Entry.Kind, repo)
			if r.Claude.Root == "" {
				fmt.Fprintf(w, "    claude:   %s\n", orUnknown(r.Claude.Reason))
			}
			if r.RX.Root == "" {
				fmt.Fprintf(w, "    reasonix: %s\n", orUnknown(r.RX.Reason))
			}
		}
	}
	section("Installed by Claude only", func(r row) bool { return r.Claude.Root != "" && r.RX.Root == "" })
	section("Installed by reasonix only", func(r row) bool { return r.Claude.Root == "" && r.RX.Root != "" })
	section("Installed by neither", func(r row) bool { return r.Claude.Root == "" && r.RX.Root == "" })
	var differing []row
	for _, r := range rows {
		if r.Compared && len(r.Diffs) > 0 {
			differing = append(differing, r)
		}
	}
	fmt.Fprintf(w, "\nInstalled by both, differing: %d\n", len(differing))
	for _, r := range differing {
		fmt.Fprintf(w, "- %s (%s): claude %s, reasonix %s\n", r.Entry.Name, r.Entry.Kind, r.Claude.Root, r.RX.Root)
		for _, d := range r.Diffs {
			fmt.Fprintf(w, "    %s\n", d)
		}
	}
}

func orUnknown(s string) string {
	if s == "" {
		return "(no install attempted or no reason recorded)"
	}
	return s
}
