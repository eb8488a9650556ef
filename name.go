package plugind

import "reasonix.io/plugind/internal/lazyregexp"

// MaxNameLen bounds plugin names; they become directory names and parts of
// qualified invocations such as /<plugin>:<skill>.
const MaxNameLen = 64

var namePattern = lazyregexp.New(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// ValidateName reports whether name can be used as an installed plugin's
// name. It is checked before any file path is built from the name.
func ValidateName(name string) error {
	switch {
	case name == "":
		return Errorf(CodeInvalidSource, "plugin name is empty")
	case len(name) > MaxNameLen:
		return Errorf(CodeInvalidSource, "plugin name %q is %d characters; the limit is %d", name, len(name), MaxNameLen)
	case name == "." || name == ".." || containsDotDot(name):
		return Errorf(CodeInvalidSource, "plugin name %q contains \"..\"", name)
	case !namePattern.MatchString(name):
		return Errorf(CodeInvalidSource, "plugin name %q is not allowed: use letters, digits, '.', '_' and '-', starting with a letter or digit (no '/', spaces or other characters)", name)
	}
	return nil
}

func containsDotDot(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		if s[i] == '.' && s[i+1] == '.' {
			return true
		}
	}
	return false
}
