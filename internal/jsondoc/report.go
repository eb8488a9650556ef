package jsondoc

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strings"
)

// Finding is one problem a document or folder has. Path is the JSON path
// of the field it names ("commands[0]", "plugins[3].source.sha"; "" for
// the document as a whole). File, when set, is the file the finding is
// about, relative to what was validated; Entry names the marketplace entry
// ("plugins[3]") whose plugin the file belongs to.
//
// Validate reports Claude Code's verdict; where Reasonix differs on
// purpose, the finding says so, and install follows the note: Kept, on an
// error, is how Reasonix reads what Claude Code refuses (install warns
// instead of refusing) and, on a warning, how Reasonix reads it
// differently; Refused, on a warning, is why Reasonix does not install
// what Claude Code accepts (install refuses or skips).
type Finding struct {
	Entry   string `json:"entry,omitempty"`
	File    string `json:"file,omitempty"`
	Path    string `json:"path"`
	Message string `json:"message"`
	Kept    string `json:"reasonixInstalls,omitempty"`
	Refused string `json:"reasonixRefuses,omitempty"`
}

// Report is what reading a document or a folder found. Errors are what
// Claude Code refuses, warnings what it tolerates.
type Report struct {
	Errors   []Finding `json:"errors"`
	Warnings []Finding `json:"warnings"`
	// Checked lists what was read, in order, and what was not (Note).
	Checked []Checked `json:"checked"`
}

// Checked is one document or folder validation looked at, or left alone.
type Checked struct {
	// Kind is "marketplace", "manifest" (a plugin manifest document),
	// "plugin" (a plugin folder) or "entry" (an entry that was not
	// followed; Note says why).
	Kind  string `json:"kind"`
	Entry string `json:"entry,omitempty"`
	Name  string `json:"name,omitempty"`
	File  string `json:"file,omitempty"`
	Note  string `json:"note,omitempty"`
}

// OK reports whether there are no errors.
func (r *Report) OK() bool { return len(r.Errors) == 0 }

// Refused reports whether install does not install what r describes: an
// error Reasonix does not keep, or a warning it refuses.
func (r *Report) Refused() bool { return len(r.refusals()) > 0 }

func (r *Report) refusals() []Finding {
	return append(slices.DeleteFunc(slices.Clone(r.Errors), func(f Finding) bool { return f.Kept != "" }),
		slices.DeleteFunc(slices.Clone(r.Warnings), func(f Finding) bool { return f.Refused == "" })...)
}

// Errorf records an error at path; Warnf a warning.
func (r *Report) Errorf(path, format string, args ...any) { r.Keep(path, "", format, args...) }
func (r *Report) Warnf(path, format string, args ...any)  { r.Refuse(path, "", format, args...) }

// Keep records an error Claude Code refuses and Reasonix reads anyway,
// saying how (see Finding.Kept).
func (r *Report) Keep(path, how, format string, args ...any) {
	r.Errors = append(r.Errors, Finding{Path: path, Message: fmt.Sprintf(format, args...), Kept: how})
}

// Refuse records a warning for what Claude Code accepts and Reasonix does
// not install, saying why (see Finding.Refused).
func (r *Report) Refuse(path, why, format string, args ...any) {
	r.Warnings = append(r.Warnings, Finding{Path: path, Message: fmt.Sprintf(format, args...), Refused: why})
}

// Merge appends other's findings. Those that name no entry get entry; when
// dir is not "", each finding's file is taken as relative to dir (a plugin
// folder inside what was validated) and made relative to the whole.
func (r *Report) Merge(other Report, entry, dir string) {
	place := func(e, file *string) {
		*e = cmp.Or(*e, entry)
		if dir != "" {
			*file = path.Join(dir, *file)
		}
	}
	for _, f := range other.Errors {
		place(&f.Entry, &f.File)
		r.Errors = append(r.Errors, f)
	}
	for _, f := range other.Warnings {
		place(&f.Entry, &f.File)
		r.Warnings = append(r.Warnings, f)
	}
	for _, c := range other.Checked {
		place(&c.Entry, &c.File)
		r.Checked = append(r.Checked, c)
	}
}

// Demote turns every error into a warning, each saying why.
func (r *Report) Demote(why string) {
	for _, f := range r.Errors {
		f.Message += " (" + why + ")"
		r.Warnings = append(r.Warnings, f)
	}
	r.Errors = nil
}

// Summary is the first few findings install refuses as one line, for its
// refusal.
func (r *Report) Summary(limit int) string {
	refused := r.refusals()
	parts := make([]string, 0, min(limit, len(refused))+1)
	for i, f := range refused {
		if i == limit {
			parts = append(parts, fmt.Sprintf("and %d more (run: reasonix plugin validate)", len(refused)-limit))
			break
		}
		line := f.Line()
		if f.Refused != "" {
			line += " (" + f.Refused + ")"
		}
		parts = append(parts, line)
	}
	return strings.Join(parts, "; ")
}

// Line is the finding as "path: message".
func (f Finding) Line() string {
	if f.Path == "" {
		return f.Message
	}
	return f.Path + ": " + f.Message
}

// Differences are where Reasonix reads a document differently from Claude
// Code on purpose, as install warnings: the errors it keeps (Claude Code
// refuses them) and the warnings that say how it differs.
func (r *Report) Differences() []string {
	var out []string
	for _, f := range r.Errors {
		if f.Kept != "" {
			out = append(out, f.Line()+" (Claude Code refuses this; "+f.Kept+")")
		}
	}
	for _, f := range r.Warnings {
		if f.Kept != "" {
			out = append(out, f.Line()+" ("+f.Kept+")")
		}
	}
	return out
}
