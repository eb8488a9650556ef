// Package checksumlog is the checksum log's vocabulary (SPEC §17), shared
// by the server the team mirror runs and the check every client makes: what
// a record says and how it is spelled, and how a record's key becomes a
// path the sumdb protocol carries. Where a client's log is
// (REASONIX_CHECKSUM_LOG) is resolver/host's ParseChecksumLog.
// The protocol itself is Go's checksum database (golang.org/x/mod/sumdb):
// the mirror serves it, resolver/host checks against it.
package checksumlog

import (
	"encoding/base32"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/mod/module"
)

// A Record is what the log says of one plugin tree: the tree at Path
// (a folder of a repository, "" for its root) of commit Commit of the
// repository at Place ("github.com/owner/repo", "git.example.test/team/tools":
// source.Source.Place, transport left out, so an SSH and an HTTPS source
// of one repository share their records) has SPEC §9 tree digest Digest
// and git tree id GitTree.
type Record struct {
	Place   string
	Path    string
	Commit  string
	Digest  string
	GitTree string // 40 hex; "" when the tree was not fetched over git nor proven against one
}

// Key is HOST/OWNER/REPO[/PATH]@SHA, as people read it.
func (r Record) Key() string { return KeyOf(r.Place, r.Path, r.Commit) }

// KeyOf spells a record's key.
func KeyOf(place, path, commit string) string {
	k := place
	if path != "" {
		k += "/" + path
	}
	return k + "@" + commit
}

// escapedHost heads the log path of every key that is not itself a valid
// module path. ".invalid" is reserved (RFC 2606): no repository lives
// there, and a key that names it is escaped too, so the mapping stays
// one-to-one.
const escapedHost = "escaped.invalid"

// folderMark separates the repository from the folder in a log path, as
// GitLab's "/-/" does in its URLs: a generic host's repository path may be
// any depth, so the boundary must be spelled. A repository path with an
// element "-" of its own is escaped.
const folderMark = "/-/"

var b32 = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// LogPath is the "module path" a record is looked up by in the sumdb
// protocol: HOST/OWNER/REPO, then "/-/PATH" for a folder, as it is when
// Go's module path rules accept it ("github.com/owner/repo/-/plugins/fmt");
// else "escaped.invalid/" and the lower-case base32 of place, a newline
// and path (a repository named .github, a host with a port, a folder with
// a space in its name, an upper-case host).
func LogPath(place, path string) string {
	p := place
	if path != "" {
		p += folderMark + path
	}
	readable := module.CheckPath(p) == nil &&
		place != escapedHost && !strings.HasPrefix(place, escapedHost+"/") &&
		!slices.Contains(strings.Split(place, "/"), "-")
	if readable {
		return p
	}
	return escapedHost + "/" + b32.EncodeToString([]byte(place+"\n"+path))
}

// SplitLogPath undoes LogPath: the repository (HOST/OWNER/REPO) and the
// folder ("" for the root) a log path stands for.
func SplitLogPath(logPath string) (place, path string, err error) {
	if rest, ok := strings.CutPrefix(logPath, escapedHost+"/"); ok {
		b, err := b32.DecodeString(rest)
		place, path, found := strings.Cut(string(b), "\n")
		if err != nil || !found || place == "" || LogPath(place, path) != logPath {
			return "", "", fmt.Errorf("checksum log: %q is not an escaped key", logPath)
		}
		return place, path, nil
	}
	place, path, _ = strings.Cut(logPath, folderMark)
	if place == "" || LogPath(place, path) != logPath {
		return "", "", fmt.Errorf("checksum log: %q is not a key", logPath)
	}
	return place, path, nil
}

var (
	hex40  = regexp.MustCompile(`^[0-9a-f]{40}$`)
	digest = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
)

// Line is the record's text in the log: one line,
//
//	LOGPATH SHA sha256:HEX GITTREE
//
// GITTREE being 40 hex or "-". The sumdb client returns the lines that
// start with "LOGPATH SHA ", which this one does.
func (r Record) Line() string {
	t := r.GitTree
	if t == "" {
		t = "-"
	}
	return fmt.Sprintf("%s %s %s %s\n", LogPath(r.Place, r.Path), r.Commit, r.Digest, t)
}

// Check says what is wrong with r, if anything, before it is logged or
// compared.
func (r Record) Check() error {
	switch {
	case r.Place == "":
		return fmt.Errorf("checksum log record: no repository")
	case !hex40.MatchString(r.Commit):
		return fmt.Errorf("checksum log record %s: commit %q is not 40 hex", r.Key(), r.Commit)
	case !digest.MatchString(r.Digest):
		return fmt.Errorf("checksum log record %s: digest %q is not sha256:HEX", r.Key(), r.Digest)
	case r.GitTree != "" && !hex40.MatchString(r.GitTree):
		return fmt.Errorf("checksum log record %s: git tree %q is not 40 hex", r.Key(), r.GitTree)
	}
	return nil
}

// ParseLine reads one record line. place and path are what the caller
// asked for (a line names them only by log path); the line must be theirs.
func ParseLine(line, place, path string) (Record, error) {
	f := strings.Fields(line)
	if len(f) != 4 {
		return Record{}, fmt.Errorf("checksum log: malformed record line %q", line)
	}
	if want := LogPath(place, path); f[0] != want {
		return Record{}, fmt.Errorf("checksum log: record line %q is not for %s", line, want)
	}
	r := Record{Place: place, Path: path, Commit: f[1], Digest: f[2]}
	if f[3] != "-" {
		r.GitTree = f[3]
	}
	return r, r.Check()
}

// ParseText reads a record's whole text as the log stores it: exactly one
// line, for the key that logPath and commit name.
func ParseText(text []byte, logPath, commit string) (Record, error) {
	place, path, err := SplitLogPath(logPath)
	if err != nil {
		return Record{}, err
	}
	s := string(text)
	if !strings.HasSuffix(s, "\n") || strings.Count(s, "\n") != 1 {
		return Record{}, fmt.Errorf("checksum log: a record is one line, got %q", s)
	}
	r, err := ParseLine(s, place, path)
	if err != nil {
		return Record{}, err
	}
	if r.Commit != commit {
		return Record{}, fmt.Errorf("checksum log: record %q is not for %s", s, KeyOf(place, path, commit))
	}
	return r, nil
}

// ParseRecord reads a record's whole text, whatever key it is of: the
// key is its own first two fields (a log path and a commit). A reader of
// the log's data tiles, which hold every record, finds its keys with it.
func ParseRecord(text []byte) (Record, error) {
	line, _, _ := strings.Cut(string(text), "\n")
	f := strings.Fields(line)
	if len(f) < 2 {
		return Record{}, fmt.Errorf("checksum log: malformed record %q", text)
	}
	return ParseText(text, f[0], f[1])
}
