package source

import (
	"path"
	"path/filepath"
	"strings"
	"unicode"

	"reasonix.io/plugind"
)

// A Source is text as String spells it, read back by ParseRecorded: the
// registry, known marketplaces, stored plans and the daemon's requests hold
// it as a JSON string parsed once, as it is decoded. String(ParseRecorded(x))
// == x for every x String writes, so files from before read back and
// re-encode byte-identical.

// MarshalText writes the source as String spells it ("" for none).
func (s Source) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a source as it was written (ParseRecorded): a
// registry's, a known marketplace's, a stored plan's. "" is none.
func (s *Source) UnmarshalText(b []byte) error {
	return fromText(s, string(b), ParseRecorded)
}

// FromText reads a source a user gave — the CLI's argument, the daemon's
// "source" — by the grammar of SPEC §5 (Parse). "" is none, as a JSON key
// left out is: the caller that needs one says so.
func FromText(text string) (Source, error) {
	var s Source
	err := fromText(&s, text, Parse)
	return s, err
}

func fromText(s *Source, text string, parse func(string) (Source, error)) error {
	if text == "" {
		*s = Source{}
		return nil
	}
	parsed, err := parse(text)
	if err == nil {
		*s = parsed
	}
	return err
}

// ErrEmpty is the refusal of no source at all.
func ErrEmpty() error {
	return plugind.Errorf(plugind.CodeInvalidSource, "empty source: give "+Forms)
}

// IsZero reports whether s is no source at all (a JSON key left out).
func (s Source) IsZero() bool { return s == Source{} }

// ParseRecorded reads a source as it is written back (String, Recorded):
// everything Parse reads, and two forms only a recording makes —
//
//   - a repository URL without ".git" pinned to a commit
//     ("https://HOST/PATH#<sha>"), which a marketplace entry may name
//     (ParseRepoURL) and Recorded keeps as the entry spelled it;
//   - an absolute local path that Parse refuses only for its whitespace:
//     a folder given relative to a working directory whose own path has a
//     space is recorded absolute.
func ParseRecorded(raw string) (Source, error) {
	s, err := Parse(raw)
	if err == nil {
		return s, nil
	}
	if base, ref, hasRef := strings.Cut(raw, "#"); hasRef && IsSHA(ref) {
		if r, err2 := ParseRepoURL(base, false); err2 == nil && r.Kind == Git {
			return r.At(ref), nil
		}
	}
	if filepath.IsAbs(raw) && !strings.ContainsFunc(raw, unicode.IsControl) {
		return Local(raw), nil
	}
	return Source{}, err
}

// Beside returns s with the folder recorded beside it (RecordedSubdir;
// "" for none) folded in: the source a registry row or a known marketplace
// names.
func (s Source) Beside(subdir string) Source {
	if subdir == "" {
		return s
	}
	return s.WithSubdir(subdir)
}

// Bare returns s without what its text cannot carry: the folder of a
// repository on a host other than GitHub, which is recorded beside it
// (RecordedSubdir). A Bare source is what its text reads back as.
func (s Source) Bare() Source {
	if s.Kind != GitHub {
		s.Subdir = ""
	}
	return s
}

// Local is the source of a folder or .zip archive on this machine at p (as
// Parse would read it): what a resolved local source records.
func Local(p string) Source {
	if strings.EqualFold(path.Ext(p), ".zip") {
		return Source{Kind: LocalZip, Path: p}
	}
	return Source{Kind: LocalDir, Path: p}
}
