package manifest

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"reasonix.io/plugind/internal/jsondoc"
	"reasonix.io/plugind/internal/lazyregexp"
)

// frontMatter is the YAML header of a SKILL.md, command or agent file.
type frontMatter struct {
	fields map[string]any
	raw    map[string]string // each top-level "key: value" line, verbatim
	lists  map[string][]string
}

var (
	fmKeyLine = lazyregexp.New(`^([A-Za-z0-9_-]+):[ \t]*(.*)$`)
	hintLine  = lazyregexp.New(`(?m)^(argument-hint:[ \t]*)([^'"|>\s].*?)[ \t]*$`)
)

// quoteHints single-quotes unquoted argument-hint values. Authors write
// "argument-hint: [file] [flags]" as display text; YAML would read it as a
// list or reject the whole header. Quoted, it reads as the string the
// author wrote, so str reads it like any other field.
func quoteHints(header string) string {
	return hintLine.ReplaceAllStringFunc(header, func(line string) string {
		m := hintLine.FindStringSubmatch(line)
		return m[1] + "'" + strings.ReplaceAll(m[2], "'", "''") + "'"
	})
}

// parseFrontMatter reads the "---" delimited header of a markdown file. A
// file without one has empty front matter. Malformed YAML is not fatal:
// the header is read again line by line and the problem is returned as a
// warning.
func parseFrontMatter(data []byte) (*frontMatter, string) {
	fm := &frontMatter{fields: map[string]any{}, raw: map[string]string{}, lists: map[string][]string{}}
	data, _ = jsondoc.TrimBOM(data)
	text := strings.ReplaceAll(string(data), "\r\n", "\n")
	if !strings.HasPrefix(text, "---\n") && text != "---" {
		return fm, ""
	}
	lines := strings.Split(text, "\n")
	end := slices.IndexFunc(lines[1:], func(l string) bool { l = strings.TrimRight(l, " \t"); return l == "---" || l == "..." })
	if end < 0 {
		return fm, "front matter has no closing \"---\" line; ignored"
	}
	header := strings.Join(lines[1:end+1], "\n")
	fm.scanLines(header)
	var parsed map[string]any
	if err := yaml.Unmarshal([]byte(quoteHints(header)), &parsed); err != nil {
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		// Keep what a line-by-line reading recovers: the common breakage is
		// an unquoted ": " inside a description.
		for k, v := range fm.raw {
			fm.fields[k] = unquote(v)
		}
		for k, v := range fm.lists {
			if fm.raw[k] == "" {
				fm.fields[k] = v
			}
		}
		return fm, fmt.Sprintf("front matter is not valid YAML (%s); read it line by line", msg)
	}
	maps.Copy(fm.fields, parsed)
	return fm, ""
}

func (fm *frontMatter) scanLines(header string) {
	// The header is in memory already: lines are slices of it (a scanner
	// allocated a 64 KiB buffer per file, a third of a large plan's
	// allocations).
	var listKey string
	for line := range strings.Lines(header) {
		line = strings.TrimSuffix(strings.TrimSuffix(line, "\n"), "\r")
		if m := fmKeyLine.FindStringSubmatch(line); m != nil {
			fm.raw[m[1]] = strings.TrimSpace(m[2])
			listKey = m[1]
			continue
		}
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "- ") && listKey != "" {
			fm.lists[listKey] = append(fm.lists[listKey], unquote(strings.TrimSpace(t[2:])))
		}
	}
}

func unquote(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\'') {
		return s[1 : len(s)-1]
	}
	return s
}

// str returns a scalar field as text.
func (fm *frontMatter) str(key string) string {
	switch v := fm.fields[key].(type) {
	case string:
		return strings.TrimSpace(v)
	case bool, int, int64, float64:
		return fmt.Sprint(v)
	}
	return ""
}

// tools returns a tool list written as a YAML list or as a comma or space
// separated string ("Read, Grep, Bash(git add:*)").
func (fm *frontMatter) tools(keys ...string) []string {
	for _, key := range keys {
		switch v := fm.fields[key].(type) {
		case string:
			return splitTools(v)
		case []any:
			var out []string
			for _, it := range v {
				if s, ok := it.(string); ok && strings.TrimSpace(s) != "" {
					out = append(out, strings.TrimSpace(s))
				}
			}
			return out
		case []string:
			return v
		}
	}
	return nil
}

// splitTools splits on commas, or on whitespace when there are none,
// never inside parentheses.
func splitTools(s string) []string {
	split := func(sep func(rune) bool) (out []string, cut bool) {
		depth, start := 0, 0
		flush := func(end int) {
			if t := strings.TrimSpace(s[start:end]); t != "" {
				out = append(out, t)
			}
		}
		for i, r := range s {
			switch {
			case r == '(':
				depth++
			case r == ')' && depth > 0:
				depth--
			case depth == 0 && sep(r):
				flush(i)
				cut, start = true, i+1
			}
		}
		flush(len(s))
		return out, cut
	}
	if out, cut := split(func(r rune) bool { return r == ',' }); cut {
		return out
	}
	out, _ := split(func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' })
	return out
}
