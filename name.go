package plugind

import "strings"

// MaxNameLen bounds plugin names; they become directory names and parts of
// qualified invocations such as /<plugin>:<skill>.
const MaxNameLen = 64

// nameChars are the bytes a name is made of: ^[A-Za-z0-9][A-Za-z0-9._-]*$
// with its first byte a letter or digit (a byte check: every plan checks
// every name, and a regexp match costs a microsecond).
const nameChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-"

// ValidateName reports whether name can be used as an installed plugin's
// name. It is checked before any file path is built from the name.
func ValidateName(name string) error {
	switch {
	case name == "":
		return Errorf(CodeInvalidSource, "plugin name is empty")
	case len(name) > MaxNameLen:
		return Errorf(CodeInvalidSource, "plugin name %q is %d characters; the limit is %d", name, len(name), MaxNameLen)
	case name == "." || strings.Contains(name, ".."):
		return Errorf(CodeInvalidSource, "plugin name %q contains \"..\"", name)
	case strings.Trim(name, nameChars) != "" || strings.IndexByte("._-", name[0]) >= 0:
		return Errorf(CodeInvalidSource, "plugin name %q is not allowed: use letters, digits, '.', '_' and '-', starting with a letter or digit (no '/', spaces or other characters)", name)
	}
	return nil
}
