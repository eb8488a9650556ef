// Package lazyregexp is a regular expression compiled on first use (after
// cmd/go's internal/lazyregexp).
package lazyregexp

import (
	"regexp"
	"sync"
)

// Regexp is a regular expression compiled on first use. Package-level
// patterns compiled at init cost every process, whichever command it runs,
// several milliseconds of its start (most of the CLI's own share of it);
// most commands use few of them. A pattern that does not compile panics on
// first use, as regexp.MustCompile would at init; tests reach every one.
type Regexp struct {
	// Compiled returns the compiled expression.
	Compiled func() *regexp.Regexp
}

// New returns pattern, to be compiled when first used.
func New(pattern string) *Regexp {
	return &Regexp{Compiled: sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pattern) })}
}

func (r *Regexp) MatchString(s string) bool { return r.Compiled().MatchString(s) }
func (r *Regexp) FindStringSubmatch(s string) []string {
	return r.Compiled().FindStringSubmatch(s)
}
func (r *Regexp) FindAllStringSubmatch(s string, n int) [][]string {
	return r.Compiled().FindAllStringSubmatch(s, n)
}
func (r *Regexp) ReplaceAllString(src, repl string) string {
	return r.Compiled().ReplaceAllString(src, repl)
}
func (r *Regexp) ReplaceAllStringFunc(src string, repl func(string) string) string {
	return r.Compiled().ReplaceAllStringFunc(src, repl)
}

func (r *Regexp) FindStringIndex(s string) []int { return r.Compiled().FindStringIndex(s) }
