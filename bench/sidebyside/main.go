// Command sidebyside is the helper of bench/claude-side-by-side.sh (SPEC §14,
// "side by side with Claude Code"). It has two subcommands:
//
//	sidebyside gen -n 20 -out DIR [-name acme-market]
//	    writes a marketplace: .claude-plugin/marketplace.json with N relative
//	    entries ./plugins/pK, each plugin with .claude-plugin/plugin.json
//	    {name, version, description}, a skill skills/sK/SKILL.md with front
//	    matter and a command commands/cK.md.
//
//	sidebyside response < RESPONSE.json
//	    summarises a reasonix install response on one line:
//	    ok=… status=… applied=… actions=… by_status=… errorCode=… error=…
//
//	sidebyside len KEY < FILE.json
//	    prints the number of elements of the top-level array or object KEY
//	    (0 when absent; KEY "." is the document itself): plugins installed
//	    according to `reasonix plugin list --json` (KEY plugins) or
//	    `claude plugin list --json` (KEY .).
//
//	sidebyside counts -log FILE [-from LINE]
//	    reads the fake GitHub's access log (the "msg=request" lines that
//	    internal/fakegithub/cmd/fakegithub writes to stderr) from line LINE+1
//	    on and prints one line of request counts, classified the way
//	    fakegithub's own Counts are:
//	    info_refs=… upload_pack=… api=… api_304=… archive=… other=… total=…
//	    (api_304 is the subset of api answered 304 Not Modified)
//
//	sidebyside names [-market] [-served OWNER/NAME,…] MARKETPLACE.json
//	    prints the marketplace's entry names, one a line (with -served: only
//	    relative entries and those naming a listed repository; with -market:
//	    the marketplace's own name).
//
//	sidebyside compare -market MARKETPLACE.json -claude-config DIR -claude-logs DIR
//	                   -reasonix-home DIR -reasonix-response FILE
//	    after both tools installed a real marketplace's entries, prints one
//	    row per entry (kind, installed by each, identical file by file, the
//	    differing files) and the reasons each tool gave for what it did not
//	    install (see compare.go).
//
//	sidebyside goldens -market MARKETPLACE.json -claude-logs DIR -list FILE
//	                   -claude-version V -source S -harness CMD -add CMD -out DIR
//	    after Claude Code installed a marketplace's entries and showed their
//	    details (claude-side-by-side.sh --goldens), writes one parity golden
//	    per entry it tried into DIR (see internal/parity).
//
//	sidebyside repair -git-dir GITDIR -out NEWGITDIR
//	    writes a servable copy of a fetched snapshot whose HEAD lacks files
//	    of 4 MiB and more (see repair.go); prints the commit to serve.
//
//	sidebyside skeletons -corpus DIR -market OWNER__NAME -mirrors DIR -out DIR
//	    writes the skeletons of one corpus marketplace's repositories (its
//	    own and its remote entries' brought here) that the corpus parity
//	    test serves in their place (see skeletons.go, internal/parity).
//
//	sidebyside paritytable -results DIR
//	    prints the parity table of issue 22 from the results the parity
//	    tests write with REASONIX_PARITY_RESULTS=DIR (see paritytable.go).
//
// Counting from the log keeps the fake's command untouched: "reset the
// counts" is "remember how many lines the log had".
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "gen":
		err = genCmd(os.Args[2:])
	case "counts":
		err = countsCmd(os.Args[2:], os.Stdout)
	case "names":
		err = namesCmd(os.Args[2:], os.Stdout)
	case "compare":
		err = compareCmd(os.Args[2:], os.Stdout)
	case "goldens":
		err = goldensCmd(os.Args[2:], os.Stdout)
	case "repair":
		err = repairCmd(os.Args[2:], os.Stdout)
	case "skeletons":
		err = skeletonsCmd(os.Args[2:], os.Stdout)
	case "paritytable":
		err = parityTableCmd(os.Args[2:], os.Stdout)
	case "response":
		err = responseCmd(os.Stdin, os.Stdout)
	case "len":
		if len(os.Args) != 3 {
			usage()
		}
		err = lenCmd(os.Args[2], os.Stdin, os.Stdout)
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "sidebyside:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: sidebyside gen -n N -out DIR [-name MARKETPLACE]\n"+
		"       sidebyside counts -log FILE [-from LINE]\n"+
		"       sidebyside response < RESPONSE.json\n"+
		"       sidebyside names [-market] [-served OWNER/NAME,…] MARKETPLACE.json\n"+
		"       sidebyside compare -market FILE -claude-config DIR -claude-logs DIR -reasonix-home DIR -reasonix-response FILE\n"+
		"       sidebyside goldens -market FILE -claude-logs DIR -list FILE -claude-version V -source S -harness CMD -add CMD -out DIR [-placeholder OLD=NEW…]\n"+
		"       sidebyside repair -git-dir GITDIR -out NEWGITDIR\n"+
		"       sidebyside skeletons -corpus DIR -market OWNER__NAME -mirrors DIR -out DIR\n"+
		"       sidebyside paritytable -results DIR\n"+
		"       sidebyside len KEY < FILE.json")
	os.Exit(2)
}

func genCmd(args []string) error {
	fs := flag.NewFlagSet("gen", flag.ExitOnError)
	n := fs.Int("n", 20, "number of plugins")
	out := fs.String("out", "", "directory to create (must not exist or be empty)")
	name := fs.String("name", "acme-market", "marketplace name")
	_ = fs.Parse(args)
	if *out == "" {
		return errors.New("gen: -out is required")
	}
	if *n < 1 || *n > 1000 {
		return fmt.Errorf("gen: -n %d: want 1..1000", *n)
	}
	return generate(*out, *name, *n)
}

type owner struct {
	Name string `json:"name"`
}

type entry struct {
	Name        string `json:"name"`
	Source      string `json:"source"`
	Description string `json:"description"`
	Version     string `json:"version"`
}

type marketplace struct {
	Name        string  `json:"name"`
	Owner       owner   `json:"owner"`
	Description string  `json:"description"`
	Plugins     []entry `json:"plugins"`
}

type pluginManifest struct {
	Name        string `json:"name"`
	Version     string `json:"version"`
	Description string `json:"description"`
}

// generate writes the marketplace tree below dir.
func generate(dir, name string, n int) error {
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		return fmt.Errorf("gen: %s is not empty", dir)
	}
	m := marketplace{
		Name:        name,
		Owner:       owner{Name: "Acme"},
		Description: fmt.Sprintf("Generated side-by-side benchmark marketplace with %d plugins", n),
	}
	for i := 1; i <= n; i++ {
		p := fmt.Sprintf("p%d", i)
		version := fmt.Sprintf("1.0.%d", i)
		desc := fmt.Sprintf("Benchmark plugin %d", i)
		m.Plugins = append(m.Plugins, entry{Name: p, Source: "./plugins/" + p, Description: desc, Version: version})
		root := filepath.Join(dir, "plugins", p)
		manifest, err := json.MarshalIndent(pluginManifest{Name: p, Version: version, Description: desc}, "", "  ")
		if err != nil {
			return err
		}
		files := map[string]string{
			".claude-plugin/plugin.json": string(manifest) + "\n",
			fmt.Sprintf("skills/s%d/SKILL.md", i): fmt.Sprintf(
				"---\nname: s%d\ndescription: Benchmark skill %d of plugin %s. Use when asked about thing %d.\n---\n\n# Skill s%d\n\nDo thing %d carefully.\n",
				i, i, p, i, i, i),
			fmt.Sprintf("commands/c%d.md", i): fmt.Sprintf(
				"---\ndescription: Benchmark command %d of plugin %s\n---\n\nRun thing %d with $ARGUMENTS.\n",
				i, p, i),
		}
		for rel, content := range files {
			if err := writeFile(filepath.Join(root, filepath.FromSlash(rel)), content); err != nil {
				return err
			}
		}
	}
	doc, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, ".claude-plugin", "marketplace.json"), string(doc)+"\n")
}

func writeFile(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o644)
}

func countsCmd(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("counts", flag.ExitOnError)
	logPath := fs.String("log", "", "the fake GitHub's access log")
	from := fs.Int("from", 0, "count only lines after this many")
	_ = fs.Parse(args)
	if *logPath == "" {
		return errors.New("counts: -log is required")
	}
	f, err := os.Open(*logPath)
	if err != nil {
		return err
	}
	defer f.Close()
	c, err := count(f, *from)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, c)
	return nil
}

// counts mirrors the classes of fakegithub.Counts that the table shows.
type counts struct {
	InfoRefs, UploadPack, API, API304, Archive, Other, Total int
}

func (c counts) String() string {
	return fmt.Sprintf("info_refs=%d upload_pack=%d api=%d api_304=%d archive=%d other=%d total=%d",
		c.InfoRefs, c.UploadPack, c.API, c.API304, c.Archive, c.Other, c.Total)
}

// count reads slog text lines after the first skip lines and classifies every
// request line by its path, as fakegithub's router does.
func count(r io.Reader, skip int) (counts, error) {
	var c counts
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		if line <= skip {
			continue
		}
		text := sc.Text()
		if field(text, "msg") != "request" {
			continue
		}
		c.Total++
		switch path := field(text, "path"); {
		case path == "/api/v3" || strings.HasPrefix(path, "/api/v3/"):
			c.API++
			if field(text, "status") == "304" {
				c.API304++
			}
		case strings.HasPrefix(path, "/_archive/"):
			c.Archive++
		case strings.HasSuffix(path, "/info/refs"):
			c.InfoRefs++
		case strings.HasSuffix(path, "/git-upload-pack"):
			c.UploadPack++
		default:
			c.Other++
		}
	}
	return c, sc.Err()
}

// field returns the value of key=value in a slog text line; quoted values
// are unquoted.
func field(line, key string) string {
	rest := line
	for {
		i := strings.Index(rest, key+"=")
		if i < 0 {
			return ""
		}
		if i > 0 && rest[i-1] != ' ' {
			rest = rest[i+len(key)+1:]
			continue
		}
		v := rest[i+len(key)+1:]
		if strings.HasPrefix(v, `"`) {
			if q, err := strconv.QuotedPrefix(v); err == nil {
				if u, err := strconv.Unquote(q); err == nil {
					return u
				}
			}
		}
		if j := strings.IndexByte(v, ' '); j >= 0 {
			v = v[:j]
		}
		return v
	}
}

// response is the part of a reasonix install response (SPEC §11) the
// benchmark reports.
type response struct {
	OK        bool   `json:"ok"`
	Status    string `json:"status"`
	Applied   bool   `json:"applied"`
	Error     string `json:"error"`
	ErrorCode string `json:"errorCode"`
	Actions   []struct {
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
		fmt.Fprintf(w, "ok=false status=unparsable error=%q\n", firstLine(string(data)))
		return nil
	}
	byStatus := map[string]int{}
	for _, a := range resp.Actions {
		byStatus[a.Status]++
	}
	statuses := make([]string, 0, len(byStatus))
	for st, n := range byStatus {
		statuses = append(statuses, fmt.Sprintf("%s:%d", st, n))
	}
	sort.Strings(statuses)
	fmt.Fprintf(w, "ok=%t status=%s applied=%t actions=%d by_status=%s errorCode=%s error=%q\n",
		resp.OK, resp.Status, resp.Applied, len(resp.Actions), strings.Join(statuses, ","), resp.ErrorCode, resp.Error)
	return nil
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

func lenCmd(key string, r io.Reader, w io.Writer) error {
	var raw json.RawMessage
	if err := json.NewDecoder(r).Decode(&raw); err != nil {
		return fmt.Errorf("len %s: %w", key, err)
	}
	if key != "." {
		var doc map[string]json.RawMessage
		if err := json.Unmarshal(raw, &doc); err != nil {
			return fmt.Errorf("len %s: %w", key, err)
		}
		raw = doc[key]
	}
	n := 0
	if len(raw) > 0 {
		var arr []json.RawMessage
		var obj map[string]json.RawMessage
		switch {
		case json.Unmarshal(raw, &arr) == nil:
			n = len(arr)
		case json.Unmarshal(raw, &obj) == nil:
			n = len(obj)
		default:
			return fmt.Errorf("len %s: neither an array nor an object", key)
		}
	}
	fmt.Fprintln(w, n)
	return nil
}
