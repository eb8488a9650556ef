package manifest

import (
	"reflect"
	"strings"
	"testing"
)

func TestFrontMatter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		doc     string
		desc    string
		hint    string
		tools   []string
		problem string // substring of the warning, "" for none
	}{
		{name: "none", doc: "# Title\nbody", desc: ""},
		{name: "plain", doc: "---\ndescription: Does things\n---\nbody", desc: "Does things"},
		{name: "CRLF and BOM", doc: "\ufeff---\r\ndescription: Windows file\r\n---\r\n", desc: "Windows file"},
		{name: "folded description", doc: "---\ndescription: >\n  one\n  two\n---\n", desc: "one two"},
		{name: "tools as list", doc: "---\nallowed-tools:\n  - Read\n  - Bash(git *)\n---\n", tools: []string{"Read", "Bash(git *)"}},
		{name: "tools comma string", doc: "---\nallowed-tools: Read, Grep,  Bash(git add:*)\n---\n", tools: []string{"Read", "Grep", "Bash(git add:*)"}},
		{name: "tools space string", doc: "---\nallowed-tools: Read Bash(git add:*, git commit:*)\n---\n", tools: []string{"Read", "Bash(git add:*, git commit:*)"}},
		{name: "allowedTools spelling", doc: "---\nallowedTools: [Read]\n---\n", tools: []string{"Read"}},
		{name: "hint bracket list", doc: "---\nargument-hint: [file] [--deep]\n---\n", hint: "[file] [--deep]"},
		{name: "hint single bracket", doc: "---\nargument-hint: [message]\n---\n", hint: "[message]"},
		{name: "hint quoted", doc: "---\nargument-hint: \"<pr-number>\"\n---\n", hint: "<pr-number>"},
		{name: "hint with apostrophe", doc: "---\nargument-hint: [it's] x\n---\n", hint: "[it's] x"},
		{name: "unquoted colon recovers", doc: "---\nname: x\ndescription: Use when: tests fail\nallowed-tools: Read\n---\n",
			desc: "Use when: tests fail", tools: []string{"Read"}, problem: "not valid YAML"},
		{name: "broken YAML keeps list", doc: "---\ndescription: a: b\nallowed-tools:\n  - Read\n  - Write\n---\n",
			desc: "a: b", tools: []string{"Read", "Write"}, problem: "not valid YAML"},
		{name: "unclosed", doc: "---\ndescription: never closed\n", desc: "", problem: "no closing"},
		{name: "non-string description", doc: "---\ndescription: [a, b]\n---\n", desc: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fm, problem := parseFrontMatter([]byte(tc.doc))
			if got := fm.str("description"); got != tc.desc {
				t.Errorf("description = %q, want %q", got, tc.desc)
			}
			if got := fm.str("argument-hint"); got != tc.hint {
				t.Errorf("argument-hint = %q, want %q", got, tc.hint)
			}
			if got := fm.tools("allowed-tools", "allowedTools"); !reflect.DeepEqual(got, tc.tools) {
				t.Errorf("tools = %q, want %q", got, tc.tools)
			}
			if (tc.problem == "") != (problem == "") || !strings.Contains(problem, tc.problem) {
				t.Errorf("problem = %q, want %q", problem, tc.problem)
			}
		})
	}
}
