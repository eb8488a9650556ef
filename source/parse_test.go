package source

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// The owner and repository name rules, written out, accept exactly what
// the regular expressions they replaced did.
func TestGitHubNameRules(t *testing.T) {
	ownerRE := regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9]|-[A-Za-z0-9]){0,38}$`)
	repoRE := regexp.MustCompile(`^[A-Za-z0-9._-]{1,100}$`)
	alphabet := []byte("aZ09-._~/ é")
	rng := rand.New(rand.NewPCG(1, 2))
	cases := []string{"", "a", "-", "a-", "-a", "a--b", "a-b-c", strings.Repeat("a", 39), strings.Repeat("a", 40),
		strings.Repeat("a-", 38) + "a", strings.Repeat("a-", 39) + "a", strings.Repeat("r", 100), strings.Repeat("r", 101), ".", ".."}
	for range 200000 {
		b := make([]byte, rng.IntN(45))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		if got, want := validOwner(s), ownerRE.MatchString(s); got != want {
			t.Fatalf("validOwner(%q) = %v, the regexp says %v", s, got, want)
		}
		_, err := gitHubRepo(s, "o", s, formRepo)
		name := strings.TrimSuffix(s, ".git")
		if want := repoRE.MatchString(name) && name != "." && name != ".."; (err == nil) != want {
			t.Fatalf("repository name %q: %v, the regexp says %v", s, err, want)
		}
	}
}
