package host

import (
	"fmt"
	"os"
	"strings"
)

// netrcLookup finds host's login and password in a .netrc file (the
// format of curl and ftp: "machine NAME", "default", "login", "password",
// "account", and "macdef" bodies, which run to a blank line). The first
// "machine" entry for host wins; "default" applies when none matches.
// A file others can read is used, and warn says so (as curl does): git
// itself, through libcurl, would use it, and the password is no more
// exposed for being used; the warning says how to fix the mode.
func netrcLookup(path, host string, warn func(string)) (login, password string, found bool, err error) {
	info, err := os.Stat(path)
	if err != nil {
		if os.IsNotExist(err) {
			return "", "", false, nil
		}
		return "", "", false, err
	}
	if info.Mode().Perm()&0o077 != 0 && warn != nil {
		warn(fmt.Sprintf("%s is readable by group or others (mode %04o); it is used, but its passwords are exposed: chmod 600 %s", path, info.Mode().Perm(), path))
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", "", false, err
	}
	type entry struct{ login, password string }
	var def *entry
	var cur *entry
	matched := false
	lines := strings.Split(string(data), "\n")
	for i := 0; i < len(lines); i++ {
		fields := strings.Fields(lines[i])
		for j := 0; j < len(fields); j++ {
			tok := fields[j]
			next := func() string {
				if j+1 < len(fields) {
					j++
					return fields[j]
				}
				return ""
			}
			switch tok {
			case "machine":
				if matched {
					return cur.login, cur.password, true, nil
				}
				cur = &entry{}
				matched = next() == host
			case "default":
				if matched {
					return cur.login, cur.password, true, nil
				}
				def = &entry{}
				cur = def
			case "login":
				if cur != nil {
					cur.login = next()
				}
			case "password":
				if cur != nil {
					cur.password = next()
				}
			case "account":
				next()
			case "macdef":
				for i+1 < len(lines) && strings.TrimSpace(lines[i+1]) != "" {
					i++
				}
				j = len(fields)
			}
		}
	}
	switch {
	case matched:
		return cur.login, cur.password, true, nil
	case def != nil:
		return def.login, def.password, true, nil
	}
	return "", "", false, nil
}
