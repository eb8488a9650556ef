package source

import (
	"fmt"
	"strings"

	"reasonix.io/plugind/internal/lazyregexp"
)

// Forms lists the source forms, for messages that say what a source can be.
const Forms = "a local folder, a .zip, git:github.com/OWNER/REPO, https://github.com/OWNER/REPO[/tree/REF/PATH], https://HOST/PATH.git[#REF], git@HOST:PATH[#REF], ssh://[USER@]HOST[:PORT]/PATH[#REF] or NAME@MARKET"

var (
	githubPathRE  = lazyregexp.New(`^(?:www\.)?github\.com/([A-Za-z0-9-]+/[A-Za-z0-9._-]+?)(?:\.git)?/?$`)
	otherRemoteRE = lazyregexp.New(`^([a-z0-9.-]+\.[a-z]{2,})/(.+?)(?:\.git)?/?$`)
)

// isOwnerRepo reports whether p is OWNER/REPO[.git] by GitHub's name rules
// (gitHubRepo's), so only a source that parses is suggested.
func isOwnerRepo(p string) bool {
	owner, repo, ok := strings.Cut(p, "/")
	_, err := gitHubRepo(p, owner, repo, formRepo)
	return ok && err == nil
}

// Suggest returns the remote source that a string read as a local path
// most likely meant ("owner/repo" → git:github.com/owner/repo), or "" when
// it looks like none. It is only ever suggested, never guessed: the CLI
// says it when no such folder exists, the daemon (which has no working
// directory) whenever it is given a relative path.
func Suggest(p string) string {
	switch {
	case githubPathRE.MatchString(p):
		return "git:github.com/" + githubPathRE.FindStringSubmatch(p)[1]
	case isOwnerRepo(p):
		return "git:github.com/" + strings.TrimSuffix(p, ".git")
	case otherRemoteRE.MatchString(p):
		m := otherRemoteRE.FindStringSubmatch(p)
		return fmt.Sprintf("https://%s/%s.git", m[1], m[2])
	}
	return ""
}

// SuggestHint is the end of a message about a path that names nothing:
// "; did you mean SOURCE?" with Suggest's answer, else the list of forms.
func SuggestHint(p string) string {
	if s := Suggest(p); s != "" {
		return fmt.Sprintf("; did you mean %s?", s)
	}
	return " (sources are " + Forms + ")"
}
