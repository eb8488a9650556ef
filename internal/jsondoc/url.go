package jsondoc

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// IsURL follows the WHATWG URL parser (which Claude Code's schema uses)
// closely enough for the fields validated as URLs: a scheme; for the web
// schemes, a host with no space or forbidden character and a numeric port.
// Slashes after the scheme are optional there ("https:x.com" parses), and
// the path is free ("%zz" and spaces are kept, percent-encoded).
func IsURL(s string) bool {
	s = strings.TrimSpace(s)
	scheme := urlScheme().FindString(s)
	if scheme == "" {
		return false
	}
	rest := s[len(scheme):]
	switch strings.ToLower(strings.TrimSuffix(scheme, ":")) {
	case "http", "https", "ws", "wss", "ftp":
	default:
		return true // file: and the non-special schemes take any rest
	}
	rest = strings.TrimLeft(rest, `/\`)
	host := rest
	if end := strings.IndexAny(rest, `/\?#`); end >= 0 {
		host = rest[:end]
	}
	if at := strings.LastIndex(host, "@"); at >= 0 {
		host = host[at+1:]
	}
	port := ""
	if strings.HasPrefix(host, "[") {
		end := strings.Index(host, "]")
		if end < 0 {
			return false
		}
		host, port = host[:end+1], host[end+1:]
		if port != "" && !strings.HasPrefix(port, ":") {
			return false
		}
		port = strings.TrimPrefix(port, ":")
	} else if i := strings.LastIndex(host, ":"); i >= 0 {
		host, port = host[:i], host[i+1:]
	}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 0 || n > 65535 || strings.ContainsAny(port, "+-") {
			return false
		}
	}
	return host != "" && !strings.ContainsAny(host, " \t\n\r<>^|\"")
}

var urlScheme = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`) })

// URL is a string that IsURL accepts.
func URL() *Shape {
	return Str().Check(func(s string) string {
		if !IsURL(s) {
			return strconv.Quote(Clip(s, 80)) + " is not a valid URL"
		}
		return ""
	})
}
