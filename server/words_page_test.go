package server

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// flagLiteral finds a command-line flag in a Go string literal.
var flagLiteral = regexp.MustCompile(`(^|[\s(` + "`" + `'"])--[a-z]`)

// formatVerb is a fmt verb, replaced by a sample value.
var formatVerb = regexp.MustCompile(`%[-+# 0]*\d*(?:\.\d+)?[a-zA-Z]`)

// backendMessages are the string literals of the packages whose messages
// reach the page (the CLI's own package aside) that name a flag, with
// their fmt verbs filled in.
func backendMessages(t *testing.T) map[string]string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			switch rel {
			case "cmd", "bench", "internal", ".git", "testdata":
				return filepath.SkipDir
			}
			if strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil || !flagLiteral.MatchString(s) {
				return true
			}
			msg := strings.ReplaceAll(formatVerb.ReplaceAllString(s, "x"), "%%", "%")
			out[fset.Position(lit.Pos()).String()] = msg
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestBrowserPageWordsCoverEveryFlag: every message of the backend that
// names a command-line flag is said without it on the page — a message
// added later with new advice fails here until the page has words for it.
// The advice the page turns into buttons is said as that button.
func TestBrowserPageWordsCoverEveryFlag(t *testing.T) {
	msgs := backendMessages(t)
	if len(msgs) < 15 {
		t.Fatalf("found only %d messages naming a flag: the scan is broken", len(msgs))
	}
	t.Logf("%d messages of the backend name a flag", len(msgs))
	e := newEnv(t, envOpts{})
	p := newTab(t, e)
	p.open("/")
	p.until("the page's words", `!!window.ReasonixWords`)
	for where, msg := range msgs {
		got := eval[string](p, `window.ReasonixWords.pageText(`+jsString(msg)+`)`)
		if flagLiteral.MatchString(got) {
			t.Errorf("%s: %q is shown as %q", where, msg, got)
		}
	}
	for _, c := range []struct{ in, want string }{
		{`plugin "x" is already installed (from s); rerun with --replace to replace it`, `plugin "x" is already installed (from s); Replace installs this one in its place`},
		{`not the approved plan: x. Nothing was written; the plan now is y: review it (--dry-run) and approve that`, `not the approved plan: x. Nothing was written; the plan now is y: review it again and approve that`},
		{`x is installed from this source with this content already: nothing to do (--replace reinstalls it)`, `x is installed from this source with this content already: nothing to do (Reinstall installs it again)`},
		{`repository not found (remembered from 3s ago; --refresh asks again)`, `repository not found (remembered from 3s ago; Ask again asks the host again)`},
		{`no known marketplace is named "m" (none is known yet; add one with: reasonix marketplace add SOURCE)`, `no known marketplace is named "m" (none is known yet; add one on the Marketplaces screen)`},
	} {
		if got := eval[string](p, `window.ReasonixWords.pageText(`+jsString(c.in)+`)`); got != c.want {
			t.Errorf("%q is shown as %q, want %q", c.in, got, c.want)
		}
	}
	if got := eval[string](p, `window.ReasonixWords.suggestion("source \"a/b\" is not a known marketplace; did you mean git:github.com/a/b?")`); got != "git:github.com/a/b" {
		t.Errorf("suggestion: %q", got)
	}
}
